package dev.readygate.server;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks Linux's scheduler for a short time slice for the threads that answer requests (readygate's server loops and
 * the gateway's), so that a request is taken up at once even when another thread has the core.
 *
 * <p>Since Linux 6.6 the fair scheduler (EEVDF) lets a running thread finish its slice before a thread that wakes up
 * gets the core: 0.7 ms times 1 + log2(cores), 1.4 ms on two cores. A loop woken by a probe (or by a client's
 * request, or the engine's first token) then waits for whatever ran there (readygate's probe loop, the compiler,
 * another process). Since Linux 6.12 a thread may ask for a shorter slice of its own ({@code sched_setattr} with
 * {@code sched_runtime}, policy {@code SCHED_OTHER}, no privilege needed, 0.1 to 100 ms): a thread with a shorter slice
 * preempts one with a longer slice when it wakes. Its share of the CPU stays the same; it runs in shorter turns.
 * Measured: the probes' {@code /readyz} p99 1.28 to 1.52 ms with the slice against 1.65 to 2.17 ms without
 * (docs/benchmarks.md §4b); the gateway's time-to-first-token p98 0.1 ms lower, its p99 not beyond its spread (§3f).
 *
 * <p>Called through the Foreign Function API ({@code syscall(2)} of the C library), so the JVM needs native access
 * (the jar's manifest grants it to readygate). Anything else (another OS or processor, an older kernel, a policy
 * the operator set) leaves the thread as it was and says so.
 */
public final class SchedulerSlice {

    /** What asking for the slice did. */
    public enum Outcome {
        /** The kernel keeps the slice asked for. */
        APPLIED,
        /** The kernel took the request and kept no slice of its own for the thread: before Linux 6.12. */
        NOT_HONOURED,
        /** Not Linux on x86-64 or AArch64, or native access not granted: nothing asked. */
        UNSUPPORTED,
        /** The thread runs under a policy other than the fair one's (set by the operator): left as it is. */
        OTHER_POLICY,
        /** The kernel refused it. */
        FAILED
    }

    private static final int SCHED_OTHER = 0;
    private static final int SCHED_BATCH = 3;

    /** {@code struct sched_attr} as of Linux 3.14 ({@code SCHED_ATTR_SIZE_VER0}): the kernel takes any later size. */
    private static final StructLayout ATTR = MemoryLayout.structLayout(
            JAVA_INT.withName("size"),
            JAVA_INT.withName("policy"),
            JAVA_LONG.withName("flags"),
            JAVA_INT.withName("nice"),
            JAVA_INT.withName("priority"),
            JAVA_LONG.withName("runtime"),
            JAVA_LONG.withName("deadline"),
            JAVA_LONG.withName("period"));

    private static final VarHandle SIZE = field("size");
    private static final VarHandle POLICY = field("policy");
    private static final VarHandle FLAGS = field("flags");
    private static final VarHandle RUNTIME = field("runtime");

    /** A thread the loop starts (a scheduler's worker made on first use) gets the kernel's default slice back. */
    private static final long SCHED_FLAG_RESET_ON_FORK = 0x01;

    private static final @Nullable Calls CALLS = Calls.find();

    private static final Logger logger = LoggerFactory.getLogger(SchedulerSlice.class);

    private final Duration slice;
    private final String whose;
    private final ThreadLocal<Boolean> asked = ThreadLocal.withInitial(() -> false);
    private final AtomicBoolean told = new AtomicBoolean();

    /**
     * @param slice the slice to ask for; zero: none asked (the kernel's default)
     * @param whose the loops' owner, for the log
     */
    public SchedulerSlice(Duration slice, String whose) {
        this.slice = slice;
        this.whose = whose;
    }

    /**
     * Asks for the slice for the calling thread, once per thread: called from a connection's set-up on its event loop,
     * so only the loops that carry connections ask (a loop a connection never came to is never started for it). The
     * first thread to ask logs what came of it.
     */
    public void askOnThisThread() {
        if (slice.isZero() || asked.get()) {
            return;
        }
        asked.set(true);
        Outcome outcome = onThisThread(slice);
        if (told.compareAndSet(false, true)) {
            log(outcome, slice, whose);
        }
    }

    private static void log(Outcome outcome, Duration slice, String whose) {
        String asked = "Event loops of " + whose + " asked the kernel for a "
                + BigDecimal.valueOf(slice.toNanos(), 6).stripTrailingZeros().toPlainString() + " ms scheduler slice";
        switch (outcome) {
            case APPLIED -> logger.info("{}: granted", asked);
            case NOT_HONOURED ->
                logger.info(
                        "{}: this kernel keeps no slice of a thread's own (Linux 6.12 or later"
                                + " does); they run with its default",
                        asked);
            case UNSUPPORTED ->
                logger.info(
                        "{}: not asked (not Linux on x86-64 or AArch64, or the JVM has no native"
                                + " access: --enable-native-access=ALL-UNNAMED)",
                        asked);
            case OTHER_POLICY ->
                logger.info(
                        "{}: not asked, the threads run under a scheduling policy set from outside, left as it is",
                        asked);
            case FAILED -> logger.warn("{}: the kernel refused sched_setattr; they run with its default", asked);
        }
    }

    /** Asks for {@code slice} for the calling thread. */
    public static Outcome onThisThread(Duration slice) {
        Calls calls = CALLS;
        if (calls == null) {
            return Outcome.UNSUPPORTED;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ATTR);
            if (calls.get(attr) != 0) {
                return Outcome.FAILED;
            }
            int policy = (int) POLICY.get(attr, 0L);
            if (policy != SCHED_OTHER && policy != SCHED_BATCH) {
                return Outcome.OTHER_POLICY;
            }
            SIZE.set(attr, 0L, (int) ATTR.byteSize());
            FLAGS.set(attr, 0L, SCHED_FLAG_RESET_ON_FORK);
            RUNTIME.set(attr, 0L, slice.toNanos());
            if (calls.set(attr) != 0) {
                return Outcome.FAILED;
            }
            if (calls.get(attr) != 0) {
                return Outcome.FAILED;
            }
            return (long) RUNTIME.get(attr, 0L) == slice.toNanos() ? Outcome.APPLIED : Outcome.NOT_HONOURED;
        } catch (Throwable failed) {
            return Outcome.FAILED;
        }
    }

    /** The slice the kernel keeps for the calling thread, if it can be read (0 before Linux 6.12). */
    public static Optional<Duration> ofThisThread() {
        Calls calls = CALLS;
        if (calls == null) {
            return Optional.empty();
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ATTR);
            return calls.get(attr) == 0
                    ? Optional.of(Duration.ofNanos((long) RUNTIME.get(attr, 0L)))
                    : Optional.empty();
        } catch (Throwable failed) {
            return Optional.empty();
        }
    }

    private static VarHandle field(String name) {
        return ATTR.varHandle(MemoryLayout.PathElement.groupElement(name));
    }

    /** {@code sched_getattr} and {@code sched_setattr} through {@code syscall(2)}, for the calling thread (pid 0). */
    private record Calls(MethodHandle syscall, long getattr, long setattr) {

        // A restricted method: the jar's manifest grants readygate native access (Enable-Native-Access).
        @SuppressWarnings("restricted")
        static @Nullable Calls find() {
            if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux")) {
                return null;
            }
            long[] numbers = switch (System.getProperty("os.arch", "")) {
                case "amd64", "x86_64" -> new long[] {315, 314};
                case "aarch64" -> new long[] {275, 274};
                default -> null;
            };
            if (numbers == null) {
                return null;
            }
            try {
                Linker linker = Linker.nativeLinker();
                MemorySegment syscall = linker.defaultLookup().find("syscall").orElse(null);
                if (syscall == null) {
                    return null;
                }
                // long syscall(long number, ...): pid, struct sched_attr *, then the size (get) or flags (set).
                MethodHandle handle = linker.downcallHandle(
                        syscall,
                        FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
                        Linker.Option.firstVariadicArg(1));
                return new Calls(handle, numbers[0], numbers[1]);
            } catch (RuntimeException | LinkageError noNativeAccess) {
                return null;
            }
        }

        long get(MemorySegment attr) throws Throwable {
            return (long) syscall.invokeExact(getattr, 0, attr, (int) ATTR.byteSize(), 0);
        }

        long set(MemorySegment attr) throws Throwable {
            return (long) syscall.invokeExact(setattr, 0, attr, 0, 0);
        }
    }
}
