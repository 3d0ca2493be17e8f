package dev.readygate.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.netty.util.concurrent.DefaultEventExecutorGroup;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * The scheduler slice asked through the Foreign Function API, read back from the kernel itself
 * ({@code sched_getattr}): on Linux 6.12 or later it keeps the slice asked for, before that it keeps none of a thread's
 * own; each thread asks once, on its own, and a zero slice asks nothing.
 */
@ExtendWith(OutputCaptureExtension.class)
public class SchedulerSliceTests {

    private static final Duration SLICE = Duration.ofNanos(100_000);

    @Test
    void theKernelKeepsTheSliceAThreadAskedForFromLinux612AndAThreadItStartsGetsTheDefault() throws Exception {
        assumeThat(linux()).as("Linux").isTrue();
        CompletableFuture<List<Object>> asked = new CompletableFuture<>();
        Thread thread = Thread.ofPlatform().start(() -> {
            SchedulerSlice.Outcome outcome = SchedulerSlice.onThisThread(SLICE);
            Optional<Duration> after = SchedulerSlice.ofThisThread();
            CompletableFuture<Optional<Duration>> started = new CompletableFuture<>();
            Thread.ofPlatform().start(() -> started.complete(SchedulerSlice.ofThisThread()));
            asked.complete(List.of(outcome, after, started.join()));
        });
        List<Object> seen = asked.get(10, TimeUnit.SECONDS);
        thread.join();
        if (kernelAtLeast(6, 12)) {
            assertThat(seen.get(0)).isEqualTo(SchedulerSlice.Outcome.APPLIED);
            assertThat(seen.get(1)).isEqualTo(Optional.of(SLICE));
            assertThat((Optional<?>) seen.get(2))
                    .as("a thread it started")
                    .isPresent()
                    .isNotEqualTo(Optional.of(SLICE));
        } else {
            assertThat(seen.get(0)).isEqualTo(SchedulerSlice.Outcome.NOT_HONOURED);
        }
    }

    @Test
    void eachThreadAsksOnceOnItsOwnAndTheFirstTellsTheLog(CapturedOutput output) throws Exception {
        assumeThat(kernelKeepsSlices()).as("Linux 6.12 or later").isTrue();
        SchedulerSlice slice = new SchedulerSlice(SLICE, "a test group");
        DefaultEventExecutorGroup loops = new DefaultEventExecutorGroup(2);
        try {
            Optional<Duration> mine = SchedulerSlice.ofThisThread();
            List<Optional<Duration>> read = new ArrayList<>();
            for (EventExecutor loop : loops) {
                read.add(loop.submit(() -> {
                            slice.askOnThisThread();
                            return SchedulerSlice.ofThisThread();
                        })
                        .get(10, TimeUnit.SECONDS));
            }
            assertThat(read).containsExactly(Optional.of(SLICE), Optional.of(SLICE));
            assertThat(SchedulerSlice.ofThisThread()).isEqualTo(mine);
            // Asked once per thread: a slice set since on the thread stays.
            Duration other = Duration.ofNanos(200_000);
            EventExecutor first = loops.next();
            Optional<Duration> again = first.submit(() -> {
                        SchedulerSlice.onThisThread(other);
                        slice.askOnThisThread();
                        return SchedulerSlice.ofThisThread();
                    })
                    .get(10, TimeUnit.SECONDS);
            assertThat(again).contains(other);
            assertThat(output.getAll())
                    .containsOnlyOnce(
                            "Event loops of a test group asked the kernel for a 0.1 ms scheduler slice: granted");
        } finally {
            loops.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void aZeroSliceAsksNothing(CapturedOutput output) throws Exception {
        assumeThat(kernelKeepsSlices()).as("Linux 6.12 or later").isTrue();
        DefaultEventExecutorGroup loops = new DefaultEventExecutorGroup(1);
        try {
            Duration other = Duration.ofNanos(200_000);
            Optional<Duration> after = loops.submit(() -> {
                        SchedulerSlice.onThisThread(other);
                        new SchedulerSlice(Duration.ZERO, "a test group").askOnThisThread();
                        return SchedulerSlice.ofThisThread();
                    })
                    .get(10, TimeUnit.SECONDS);
            assertThat(after).contains(other);
            assertThat(output.getAll()).doesNotContain("Event loops of a test group");
        } finally {
            loops.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        }
    }

    private static boolean linux() {
        return System.getProperty("os.name").toLowerCase(Locale.ROOT).startsWith("linux");
    }

    /**
     * Whether this machine's kernel keeps a thread's own slice (Linux 6.12 or later): so does a container's, which runs
     * on it.
     */
    public static boolean kernelKeepsSlices() {
        return linux() && kernelAtLeast(6, 12);
    }

    /** From {@code os.version}, e.g. {@code 6.18.44-fc-v1300}. */
    private static boolean kernelAtLeast(int major, int minor) {
        String[] parts = System.getProperty("os.version").split("[.-]");
        int seenMajor = Integer.parseInt(parts[0]);
        int seenMinor = Integer.parseInt(parts[1]);
        return seenMajor > major || (seenMajor == major && seenMinor >= minor);
    }
}
