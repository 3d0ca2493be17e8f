package dev.readygate.benchmark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * readygate (or the proxy measured beside it) on a core of its own, apart from the load generator and the engine
 * (issue 30, item 2): the tails measured are then its own, not the machine's. The last CPU this harness may use goes to readygate ({@link #wrap}, {@code
 * taskset -c}); the harness's threads and the simulator's process are moved to the others for as long as readygate is
 * measured ({@link #apart}), and back after ({@link #together}). Threads created while apart inherit it (the load
 * generator's). Only where {@code taskset} (util-linux) runs and at least two CPUs are allowed.
 *
 * @param readygate readygate's CPU
 * @param others the CPUs of the load generator and the engine, in {@code taskset}'s list form
 * @param all the CPUs allowed before, to be given back
 */
record CpuSplit(int readygate, String others, String all) {

    /** The split for this process's allowed CPUs ({@code Cpus_allowed_list}), or empty where none can be made. */
    static Optional<CpuSplit> detect() {
        try {
            List<Integer> cpus = allowed(Files.readAllLines(Path.of("/proc/self/status")));
            if (cpus.size() < 2 || run(List.of("taskset", "-c", String.valueOf(cpus.getFirst()), "true")) != 0) {
                return Optional.empty();
            }
            List<Integer> rest = cpus.subList(0, cpus.size() - 1);
            return Optional.of(new CpuSplit(cpus.getLast(), list(rest), list(cpus)));
        } catch (IOException | InterruptedException ex) {
            if (ex instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return Optional.empty();
        }
    }

    /** The CPUs of a {@code Cpus_allowed_list} line ("0-3,6"), in order. */
    static List<Integer> allowed(List<String> status) {
        List<Integer> cpus = new ArrayList<>();
        for (String line : status) {
            if (!line.startsWith("Cpus_allowed_list:")) {
                continue;
            }
            for (String part : line.substring(line.indexOf(':') + 1).strip().split(",")) {
                String[] range = part.strip().split("-");
                int from = Integer.parseInt(range[0]);
                int to = range.length > 1 ? Integer.parseInt(range[1]) : from;
                for (int cpu = from; cpu <= to; cpu++) {
                    cpus.add(cpu);
                }
            }
        }
        return cpus;
    }

    private static String list(List<Integer> cpus) {
        return cpus.stream().map(String::valueOf).collect(Collectors.joining(","));
    }

    /** readygate's command, started on its CPU. */
    List<String> wrap(List<String> command) {
        List<String> wrapped = new ArrayList<>(List.of("taskset", "-c", String.valueOf(readygate)));
        wrapped.addAll(command);
        return wrapped;
    }

    /** Moves every thread of these processes off readygate's CPU. */
    void apart(long... pids) throws IOException, InterruptedException {
        move(others, pids);
    }

    /** Gives these processes every CPU they had. */
    void together(long... pids) throws IOException, InterruptedException {
        move(all, pids);
    }

    /** In words, for the report: what runs on the CPU of its own, and what on the others. */
    String describe(String alone, String rest) {
        return alone + " on CPU " + readygate + " alone; " + rest + " on CPU " + others;
    }

    private static void move(String cpus, long... pids) throws IOException, InterruptedException {
        for (long pid : pids) {
            if (run(List.of("taskset", "-a", "-p", "-c", cpus, String.valueOf(pid))) != 0) {
                throw new IOException("taskset could not move process " + pid + " to CPU " + cpus);
            }
        }
    }

    private static int run(List<String> command) throws IOException, InterruptedException {
        return new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start()
                .waitFor();
    }
}
