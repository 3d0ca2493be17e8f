package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.junit.jupiter.api.Test;

/** The gateway's buffers: pooled whatever Netty's default, and one pool however often a gateway opens. */
class TrafficResourcesTests {

    @Test
    void everyOpeningSharesOnePooledAllocatorNotNettysDefault() {
        TrafficResources first = new TrafficResources();
        TrafficResources second = new TrafficResources();
        try {
            assertThat(first.buffers).isSameAs(second.buffers);
            assertThat(first.buffers.isDirectBufferPooled()).isTrue();
            assertThat(first.buffers)
                    .isNotSameAs(ByteBufAllocator.DEFAULT)
                    .isNotInstanceOf(UnpooledByteBufAllocator.class);
        } finally {
            first.dispose();
            second.dispose();
        }
    }
}
