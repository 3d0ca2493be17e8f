package dev.readygate.check;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.probe.ModelAcceptance;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

class AcceptLauncherTests {

    @TempDir
    Path stateDir;

    final ByteArrayOutputStream printed = new ByteArrayOutputStream();
    final PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
    final MovingClock clock = new MovingClock(Instant.parse("2026-12-02T02:00:00Z"));

    ModelAcceptance acceptance() {
        return new ModelAcceptance(stateDir, JsonMapper.builder().build());
    }

    /** A clock that a test's sleeps move on: no real waiting. */
    static final class MovingClock extends Clock {
        final AtomicReference<Instant> now;

        MovingClock(Instant start) {
            now = new AtomicReference<>(start);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now.get();
        }

        void sleep(long millis) {
            now.updateAndGet(t -> t.plusMillis(millis));
        }
    }

    AcceptLauncher.Options options(Duration wait) {
        return new AcceptLauncher.Options("swapped to the fine-tune", "alice", wait, List.of());
    }

    @Test
    void withoutAReasonNothingIsWrittenAndTheOptionIsNamed() {
        int exit = AcceptLauncher.run(new String[] {"--readygate.state-dir=" + stateDir}, out);

        assertThat(exit).isEqualTo(AcceptLauncher.BAD_USAGE);
        assertThat(printed.toString(StandardCharsets.UTF_8)).contains("--reason is required");
        assertThat(stateDir.resolve(ModelAcceptance.REQUEST)).doesNotExist();
    }

    @Test
    void optionsAreReadApartFromReadygatesSettings() {
        AcceptLauncher.Options options = AcceptLauncher.options(
                new String[] {"--reason=ticket 123", "--wait=30s", "--readygate.state-dir=/var/lib/readygate"}, "bob");

        assertThat(options.reason()).isEqualTo("ticket 123");
        assertThat(options.by()).isEqualTo("bob");
        assertThat(options.waitFor()).isEqualTo(Duration.ofSeconds(30));
        assertThat(options.settings()).containsExactly("--readygate.state-dir=/var/lib/readygate");
    }

    @Test
    void aRequestNoReadygateTakesIsWithdrawnSoNoneStaysBehind() {
        int exit =
                AcceptLauncher.accept(acceptance(), stateDir, options(Duration.ofSeconds(5)), clock, clock::sleep, out);

        assertThat(exit).isEqualTo(AcceptLauncher.NOT_ACCEPTED);
        assertThat(printed.toString(StandardCharsets.UTF_8)).contains("no readygate took the request within 5 s");
        assertThat(stateDir.resolve(ModelAcceptance.REQUEST)).doesNotExist();
    }

    @Test
    void aRequestTheRunningReadygateTakesPrintsItsAuditLineAndExitsZero() {
        // The running readygate, as the files show it: it renames the request away, then appends its audit line.
        int exit = AcceptLauncher.accept(
                acceptance(),
                stateDir,
                options(Duration.ofSeconds(60)),
                clock,
                millis -> {
                    clock.sleep(millis);
                    readygateTakes("accepted");
                },
                out);

        assertThat(exit).isEqualTo(AcceptLauncher.ACCEPTED);
        assertThat(printed.toString(StandardCharsets.UTF_8))
                .contains("accepted: the canary baseline of m is now [999]");
    }

    @Test
    void aRequestReadygateRefusesExitsOneWithItsReason() {
        int exit = AcceptLauncher.accept(
                acceptance(),
                stateDir,
                options(Duration.ofSeconds(60)),
                clock,
                millis -> {
                    clock.sleep(millis);
                    readygateTakes("refused");
                },
                out);

        assertThat(exit).isEqualTo(AcceptLauncher.NOT_ACCEPTED);
        assertThat(printed.toString(StandardCharsets.UTF_8))
                .contains("not accepted: the expected answer is configured");
    }

    private void readygateTakes(String outcome) {
        Path request = stateDir.resolve(ModelAcceptance.REQUEST);
        if (!Files.exists(request)) {
            return;
        }
        try {
            String id = JsonMapper.builder()
                    .build()
                    .readTree(Files.readString(request))
                    .path("id")
                    .asString();
            Files.delete(request);
            String line = "{\"id\":\"" + id + "\",\"by\":\"alice\",\"outcome\":\"" + outcome
                    + "\",\"model\":\"m\",\"baseline\":\"[999]\",\"detail\":\"the expected answer is configured\"}\n";
            Files.writeString(
                    stateDir.resolve(ModelAcceptance.AUDIT),
                    line,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
