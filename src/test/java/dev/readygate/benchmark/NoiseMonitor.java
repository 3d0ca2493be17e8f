package dev.readygate.benchmark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * How noisy the machine was while a stage ran: a thread that asks to sleep 1 ms and records how late it woke (the
 * scheduling delay any timer in the benchmark also suffers), the load average, and the CPU the whole machine spent
 * against what this JVM (and the processes it started) spent, from {@code /proc}. Other engineers share the machine:
 * "others" is their load.
 */
final class NoiseMonitor implements AutoCloseable {

    /** Linux's USER_HZ: the unit of {@code /proc/stat} and {@code /proc/<pid>/stat} CPU times. */
    private static final double TICKS_PER_SECOND = 100.0;

    private final Thread thread;
    private volatile boolean closed;
    private volatile @Nullable Samples jitter;
    private final List<Map<String, Object>> stages = new ArrayList<>();
    private final List<Long> children = new ArrayList<>();
    private long finishedTicks;
    private String stage = "";
    private long startNanos;
    private long[] machineStart = new long[2];
    private long ownStart;
    private double loadStart;

    NoiseMonitor() {
        this.thread = Thread.ofPlatform().daemon().name("noise-monitor").start(this::run);
    }

    private void run() {
        while (!closed) {
            long before = System.nanoTime();
            LockSupport.parkNanos(1_000_000);
            double lateMs = (System.nanoTime() - before) / 1e6 - 1.0;
            Samples current = jitter;
            if (current != null) {
                synchronized (current) {
                    current.add(Math.max(0, lateMs));
                }
            }
        }
    }

    /** Counts the CPU of a process this run started (a simulator or readygate JVM) as the run's own. */
    synchronized void own(long pid) {
        children.add(pid);
    }

    /** A process this run started is about to end: its CPU so far stays the run's own. */
    synchronized void ownEnding(long pid) {
        finishedTicks += processTicks(pid);
        children.remove(pid);
    }

    synchronized void begin(String name) {
        stage = name;
        startNanos = System.nanoTime();
        machineStart = machineTicks();
        ownStart = ownTicks();
        loadStart = loadAverage();
        jitter = new Samples("timer lateness " + name, "ms");
    }

    synchronized void end() {
        Samples late = jitter;
        jitter = null;
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        long[] machine = machineTicks();
        double busy = (machine[0] - machineStart[0]) / TICKS_PER_SECOND / seconds;
        double own = (ownTicks() - ownStart) / TICKS_PER_SECOND / seconds;
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("stage", stage);
        out.put("seconds", Samples.round(seconds));
        out.put("cores", Runtime.getRuntime().availableProcessors());
        out.put("machine_busy_cores", Samples.round(busy));
        out.put("benchmark_busy_cores", Samples.round(own));
        out.put("others_busy_cores", Samples.round(Math.max(0, busy - own)));
        out.put("load_average_1m_start", loadStart);
        out.put("load_average_1m_end", loadAverage());
        if (late != null) {
            synchronized (late) {
                out.put("timer_lateness_ms", late.summary());
            }
        }
        stages.add(out);
        Benchmark.progress(
                "noise %s: machine %.2f cores busy (others %.2f), 1 ms timer late p99 %.2f ms",
                stage, busy, Math.max(0, busy - own), late == null ? Double.NaN : late.p99());
    }

    synchronized List<Map<String, Object>> stages() {
        return List.copyOf(stages);
    }

    /** Busy and total jiffies of the whole machine. */
    private static long[] machineTicks() {
        try {
            String[] f =
                    Files.readAllLines(Path.of("/proc/stat")).getFirst().trim().split("\\s+");
            long total = 0;
            for (int i = 1; i < f.length && i <= 8; i++) {
                total += Long.parseLong(f[i]);
            }
            long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
            return new long[] {total - idle, total};
        } catch (IOException | RuntimeException ex) {
            return new long[] {0, 0};
        }
    }

    private long ownTicks() {
        long ticks = processTicks(ProcessHandle.current().pid()) + finishedTicks;
        for (long child : children) {
            ticks += processTicks(child);
        }
        return ticks;
    }

    /** utime + stime of a process (0 once it is gone). */
    static long processTicks(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException ex) {
            return 0;
        }
    }

    static double processCpuSeconds(long pid) {
        return processTicks(pid) / TICKS_PER_SECOND;
    }

    static double loadAverage() {
        try {
            return Double.parseDouble(
                    Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException ex) {
            return Double.NaN;
        }
    }

    @Override
    public void close() {
        closed = true;
    }
}
