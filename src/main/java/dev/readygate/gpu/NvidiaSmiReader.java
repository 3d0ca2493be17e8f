package dev.readygate.gpu;

import dev.readygate.config.NvidiaSmiFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.util.unit.DataSize;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Reads GPU memory by running {@code nvidia-smi} twice, once for {@code --query-gpu} and once for
 * {@code --query-compute-apps} (CSV without header or units), and parsing the output with {@link NvidiaSmiParser}.
 *
 * <p>Each run is bounded: it is killed (with its descendants) when it outlasts the timeout or prints more than the
 * output limit. Every failure becomes a {@link GpuReading.Failure}: a binary that cannot be started is
 * {@code binary_missing}, a non-zero exit is {@code exit_code} with the first stderr line. When GPU UUIDs are
 * configured, the snapshot keeps only those GPUs and their processes ({@code no_matching_gpu} when none is found).
 *
 * <p>The processes are started and waited for on the given scheduler, which must allow blocking (e.g.
 * {@code Schedulers.boundedElastic()}); their output is drained by two virtual threads per run. Each of the two runs
 * gets the whole timeout. A descendant that outlives the binary and keeps its output open makes the run time out, but
 * is not killed (it is no longer the binary's descendant); nvidia-smi does not fork.
 */
final class NvidiaSmiReader implements GpuMemorySource {

    /** The binary run when none is configured: {@code nvidia-smi}, looked up on the {@code PATH}. */
    public static final Path DEFAULT_BINARY = Path.of("nvidia-smi");

    /** The default output limit per run. */
    public static final DataSize DEFAULT_MAX_OUTPUT = DataSize.ofMegabytes(1);

    private static final int MAX_STDERR_BYTES = 8 * 1024;

    private static final Pattern ENOENT = Pattern.compile("error[=:] ?2\\b");

    private final Path binary;
    private final NvidiaSmiFormat format;
    private final List<String> gpuUuids;
    private final Duration timeout;
    private final int maxOutputBytes;
    private final Clock clock;
    private final Scheduler scheduler;

    /**
     * @param binary the {@code nvidia-smi} binary: a bare name is looked up on the {@code PATH}
     * @param gpuUuids the GPUs to report; empty for all
     * @param timeout how long each of the two runs may take
     * @param maxOutput how much standard output each run may print
     * @param clock when readings are taken
     * @param scheduler where the processes run and are read: must allow blocking
     */
    public NvidiaSmiReader(
            Path binary,
            List<String> gpuUuids,
            Duration timeout,
            DataSize maxOutput,
            Clock clock,
            Scheduler scheduler) {
        this(binary, NvidiaSmiFormat.CSV, gpuUuids, timeout, maxOutput, clock, scheduler);
    }

    /**
     * @param binary the {@code nvidia-smi} binary: a bare name is looked up on the {@code PATH}
     * @param format CSV queries or the {@code -q -x} XML report
     * @param gpuUuids the GPUs to report; empty for all
     * @param timeout how long each run may take
     * @param maxOutput how much standard output each run may print
     * @param clock when readings are taken
     * @param scheduler where the processes run and are read: must allow blocking
     */
    public NvidiaSmiReader(
            Path binary,
            NvidiaSmiFormat format,
            List<String> gpuUuids,
            Duration timeout,
            DataSize maxOutput,
            Clock clock,
            Scheduler scheduler) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, was " + timeout);
        }
        if (maxOutput.toBytes() < 1 || maxOutput.toBytes() > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("maxOutput must be between 1B and 2GB, was " + maxOutput);
        }
        this.binary = binary;
        this.format = format;
        this.gpuUuids = List.copyOf(gpuUuids);
        this.timeout = timeout;
        this.maxOutputBytes = (int) maxOutput.toBytes();
        this.clock = clock;
        this.scheduler = scheduler;
    }

    @Override
    public String name() {
        return "nvidia_smi";
    }

    /** One reading, taken on subscription; never an error signal. */
    @Override
    public Mono<GpuReading> read() {
        return Mono.fromCallable(this::readNow).subscribeOn(scheduler);
    }

    private GpuReading readNow() {
        if (format == NvidiaSmiFormat.XML) {
            return switch (run(List.of("-q", "-x"))) {
                case Run.Failed(GpuReading.Failure failure) -> failure;
                case Run.Completed(String xml) -> select(NvidiaSmiParser.parseXml(xml, clock.instant()));
            };
        }
        return switch (run(queryArguments("--query-gpu=", NvidiaSmiParser.GPU_FIELDS))) {
            case Run.Failed(GpuReading.Failure failure) -> failure;
            case Run.Completed(String gpuCsv) ->
                switch (run(queryArguments("--query-compute-apps=", NvidiaSmiParser.APP_FIELDS))) {
                    case Run.Failed(GpuReading.Failure failure) -> failure;
                    case Run.Completed(String appsCsv) ->
                        select(NvidiaSmiParser.parseCsv(
                                gpuCsv,
                                NvidiaSmiParser.GPU_FIELDS,
                                appsCsv,
                                NvidiaSmiParser.APP_FIELDS,
                                clock.instant()));
                };
        };
    }

    private GpuReading select(GpuReading reading) {
        return GpuReading.onlyGpus(reading, gpuUuids);
    }

    private static List<String> queryArguments(String query, List<String> fields) {
        return List.of(query + String.join(",", fields), "--format=csv,noheader,nounits");
    }

    /** The outcome of one run of the binary. */
    private sealed interface Run {

        record Completed(String stdout) implements Run {}

        record Failed(GpuReading.Failure failure) implements Run {}
    }

    private Run run(List<String> arguments) {
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.addAll(arguments);
        Process process;
        try {
            process = new ProcessBuilder(command).start();
        } catch (IOException ex) {
            return cannotStart(ex);
        }
        try {
            process.getOutputStream().close(); // nvidia-smi reads no input
        } catch (IOException ex) {
            // nothing to close
        }
        AtomicBoolean tooLarge = new AtomicBoolean();
        Drain stdout = new Drain(process.getInputStream(), maxOutputBytes, () -> {
            tooLarge.set(true);
            kill(process);
        });
        Drain stderr = new Drain(process.getErrorStream(), MAX_STDERR_BYTES, () -> {});
        Thread stdoutReader = Thread.ofVirtual().name("nvidia-smi-stdout").start(stdout);
        Thread stderrReader = Thread.ofVirtual().name("nvidia-smi-stderr").start(stderr);
        try {
            long deadline = System.nanoTime() + timeout.toNanos();
            boolean exited = process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
            // A descendant may keep the pipes open after the binary exited: the deadline bounds that too.
            boolean drained =
                    exited && stdoutReader.join(remaining(deadline)) && stderrReader.join(remaining(deadline));
            if (!exited || !drained) {
                kill(process);
                return failed(GpuReading.Reason.TIMED_OUT, binary + " did not finish within " + timeout + " (killed)");
            }
        } catch (InterruptedException ex) {
            kill(process);
            Thread.currentThread().interrupt();
            return failed(GpuReading.Reason.IO_ERROR, "interrupted while running " + binary);
        }
        if (tooLarge.get()) {
            return failed(
                    GpuReading.Reason.UNEXPECTED_OUTPUT,
                    binary + " printed more than " + maxOutputBytes + " bytes (killed)");
        }
        IOException readError = stdout.error;
        if (readError != null) {
            return failed(GpuReading.Reason.IO_ERROR, "reading " + binary + ": " + readError.getMessage());
        }
        int exitCode = process.exitValue();
        if (exitCode != 0) {
            return failed(
                    GpuReading.Reason.EXIT_CODE,
                    binary + " exited with " + exitCode
                            + firstLine(stderr.text()).map(line -> ": " + line).orElse(""));
        }
        return new Run.Completed(stdout.text());
    }

    private Run cannotStart(IOException ex) {
        String message = String.valueOf(ex.getMessage());
        // ProcessBuilder reports ENOENT as "error=2, ..." (before Java 25) or "error: 2 (...)"; a path that does
        // not exist says the same more directly.
        boolean missing = ENOENT.matcher(message).find()
                || (binary.getNameCount() > 1 || binary.isAbsolute()) && !Files.exists(binary);
        return failed(
                missing ? GpuReading.Reason.BINARY_MISSING : GpuReading.Reason.IO_ERROR,
                "cannot run " + binary + ": " + NvidiaSmiParser.excerpt(message));
    }

    private static Run failed(GpuReading.Reason reason, String detail) {
        return new Run.Failed(new GpuReading.Failure(reason, detail));
    }

    private static Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
    }

    private static Optional<String> firstLine(String text) {
        return text.lines()
                .map(String::strip)
                .filter(line -> !line.isEmpty())
                .findFirst()
                .map(NvidiaSmiParser::excerpt);
    }

    private static void kill(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(1, TimeUnit.SECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** Reads a stream to its end, keeping at most {@code limit} bytes; past it, calls {@code onOverflow} once. */
    private static final class Drain implements Runnable {

        private final InputStream in;
        private final int limit;
        private final Runnable onOverflow;
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private volatile @Nullable IOException error;

        Drain(InputStream in, int limit, Runnable onOverflow) {
            this.in = in;
            this.limit = limit;
            this.onOverflow = onOverflow;
        }

        @Override
        public void run() {
            byte[] buffer = new byte[8192];
            boolean overflowed = false;
            try (in) {
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    int keep = Math.min(read, limit - bytes.size());
                    if (keep > 0) {
                        bytes.write(buffer, 0, keep);
                    }
                    if (keep < read && !overflowed) {
                        overflowed = true;
                        onOverflow.run();
                    }
                }
            } catch (IOException ex) {
                error = ex;
            }
        }

        String text() {
            return bytes.toString(StandardCharsets.UTF_8);
        }
    }
}
