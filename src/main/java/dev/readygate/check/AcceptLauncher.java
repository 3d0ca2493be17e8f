package dev.readygate.check;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.probe.ModelAcceptance;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code java -jar readygate.jar accept-model --reason="swapped to the fine-tune, ticket 123" [--by=NAME]
 * [--wait=120s] [readygate settings]}: the operator's one way to accept the model the engine serves now, when its
 * canary answer differs from the learned baseline on purpose. It binds readygate's configuration as the sidecar does
 * (for {@code readygate.state-dir}), writes a request there ({@link ModelAcceptance}) without taking the sidecar's
 * lock, and waits for the running readygate to take it: readygate releases the latched {@code canary_mismatch}, learns
 * the canary's next answer as the baseline, and writes an audit line, which this command prints. A request not taken
 * within the wait is withdrawn, so none stays behind. Exit status: 0 accepted, 1 not accepted (refused, or not taken in
 * time), 2 wrong usage or configuration.
 */
public final class AcceptLauncher {

    /** The first command-line argument that selects this command. */
    public static final String COMMAND = "accept-model";

    static final int ACCEPTED = 0;
    static final int NOT_ACCEPTED = 1;
    static final int BAD_USAGE = 2;

    private static final Duration DEFAULT_WAIT = Duration.ofSeconds(120);
    private static final long POLL_MILLIS = 250;

    private AcceptLauncher() {}

    /** Only the configuration, bound and guarded as the sidecar's. */
    @Configuration(proxyBeanMethods = false)
    @ConfigurationPropertiesScan(basePackageClasses = ReadygateProperties.class)
    @ComponentScan(basePackageClasses = ReadygateProperties.class)
    static class AcceptConfiguration {}

    /** This command's own options, apart from readygate's settings. */
    record Options(String reason, String by, Duration waitFor, List<String> settings) {}

    /**
     * Reads {@code --reason}, {@code --by} and {@code --wait}; the other arguments are readygate's settings.
     *
     * @throws IllegalArgumentException naming the option, for a missing reason or a bad wait
     */
    static Options options(String[] args, String user) {
        String reason = null;
        String by = user;
        Duration wait = DEFAULT_WAIT;
        List<String> settings = new ArrayList<>();
        for (String arg : args) {
            if (arg.startsWith("--reason=")) {
                reason = arg.substring("--reason=".length()).strip();
            } else if (arg.startsWith("--by=")) {
                by = arg.substring("--by=".length()).strip();
            } else if (arg.startsWith("--wait=")) {
                String value = arg.substring("--wait=".length()).strip();
                try {
                    wait = DurationStyle.detectAndParse(value);
                } catch (IllegalArgumentException | DateTimeParseException ex) {
                    throw new IllegalArgumentException("--wait must be a duration such as 120s (was " + value + ")");
                }
                if (wait.isNegative() || wait.isZero()) {
                    throw new IllegalArgumentException("--wait must be positive (was " + value + ")");
                }
            } else {
                settings.add(arg);
            }
        }
        if (reason == null || reason.isEmpty()) {
            throw new IllegalArgumentException(
                    "--reason is required: say why this model is accepted (it is kept in the audit)");
        }
        if (by.isEmpty()) {
            throw new IllegalArgumentException("--by must name who accepts the model");
        }
        return new Options(reason, by, wait, settings);
    }

    /** Runs the command with {@code args}, printing to {@code out}; returns the exit status. */
    public static int run(String[] args, PrintStream out) {
        Options options;
        try {
            options = options(args, System.getProperty("user.name", "unknown"));
        } catch (IllegalArgumentException ex) {
            out.println("readygate accept-model: " + ex.getMessage());
            return BAD_USAGE;
        }
        Path stateDir;
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(AcceptConfiguration.class)
                .web(WebApplicationType.NONE)
                .bannerMode(Banner.Mode.OFF)
                .logStartupInfo(false)
                // Default properties, below every configured source: the command talks to no engine, so an engine
                // URL is not required of it (the sidecar's own, where configured, is read and unused).
                .properties(
                        "readygate.engine.base-url=http://engine-not-used.invalid",
                        "logging.level.root=WARN",
                        "logging.level.org.springframework.boot.SpringApplication=OFF",
                        "logging.level.org.springframework.boot.diagnostics=OFF",
                        "logging.level.org.springframework.context=ERROR",
                        "logging.level.dev.readygate.config=ERROR")
                .run(options.settings().toArray(String[]::new))) {
            stateDir = context.getBean(ReadygateProperties.class).stateDir();
        } catch (RuntimeException ex) {
            out.println("readygate accept-model: configuration problem: " + CheckLauncher.rootMessage(ex));
            return BAD_USAGE;
        }
        return accept(
                new ModelAcceptance(stateDir, JsonMapper.builder().build()),
                stateDir,
                options,
                Clock.systemUTC(),
                AcceptLauncher::sleep,
                out);
    }

    /** Writes the request, waits for readygate's audit line, and withdraws the request when none comes in time. */
    static int accept(
            ModelAcceptance acceptance,
            Path stateDir,
            Options options,
            Clock clock,
            LongConsumer sleep,
            PrintStream out) {
        ModelAcceptance.Request request;
        try {
            request = acceptance.request(options.by(), options.reason(), clock.instant());
        } catch (IOException | RuntimeException ex) {
            out.println("readygate accept-model: cannot write the request into " + stateDir + ": " + ex.getMessage());
            return NOT_ACCEPTED;
        }
        out.println("request " + request.id() + " by " + request.by() + " written to "
                + stateDir.resolve(ModelAcceptance.REQUEST) + "; waiting up to "
                + options.waitFor().toSeconds()
                + " s for readygate to take it");
        Instant until = clock.instant().plus(options.waitFor());
        try {
            JsonNode outcome = awaitOutcome(acceptance, request, until, clock, sleep);
            if (outcome == null) {
                if (acceptance.withdraw(request)) {
                    out.println("not accepted: no readygate took the request within "
                            + options.waitFor().toSeconds()
                            + " s (is it running with readygate.state-dir=" + stateDir + ", and does its canary"
                            + " run?); the request is withdrawn");
                    return NOT_ACCEPTED;
                }
                // Taken just now: its audit line follows.
                outcome = awaitOutcome(acceptance, request, clock.instant().plusSeconds(30), clock, sleep);
                if (outcome == null) {
                    out.println("readygate took the request but wrote no audit line: see its log and "
                            + stateDir.resolve(ModelAcceptance.AUDIT));
                    return NOT_ACCEPTED;
                }
            }
            out.println("audit: " + outcome);
            boolean accepted = "accepted".equals(outcome.path("outcome").asString(""));
            out.println(
                    accepted
                            ? "accepted: the canary baseline of "
                                    + outcome.path("model").asString("the model") + " is now "
                                    + outcome.path("baseline").asString("")
                            : "not accepted: " + outcome.path("detail").asString("refused"));
            return accepted ? ACCEPTED : NOT_ACCEPTED;
        } catch (IOException ex) {
            out.println("readygate accept-model: cannot read " + stateDir + ": " + ex.getMessage());
            return NOT_ACCEPTED;
        }
    }

    private static @Nullable JsonNode awaitOutcome(
            ModelAcceptance acceptance, ModelAcceptance.Request request, Instant until, Clock clock, LongConsumer sleep)
            throws IOException {
        while (true) {
            JsonNode outcome = acceptance.outcome(request.id());
            if (outcome != null || !clock.instant().isBefore(until)) {
                return outcome;
            }
            sleep.accept(POLL_MILLIS);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out));
    }
}
