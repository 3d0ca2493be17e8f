package dev.readygate;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * What BlockHound lets through besides Netty's own integration: Netty 4.2's adaptive buffer allocator takes a lock for
 * a moment while it frees a magazine or adds one ({@code AdaptivePoolingAllocator$Magazine.free}, reached from {@code
 * MagazineGroup.tryExpandMagazines} on the event loop when allocation is contended). It parks only under that
 * contention: seen once in CI, on an event loop reading a {@code /status} answer in {@code RestartTrackingTests}.
 * Registered through {@code META-INF/services} for every test JVM.
 */
public final class NettyAllocatorBlockHound implements BlockHoundIntegration {

    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$Magazine", "free");
        builder.allowBlockingCallsInside(
                "io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines");
    }
}
