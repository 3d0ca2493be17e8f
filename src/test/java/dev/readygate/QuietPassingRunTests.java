package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.config.SettingsStart;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * A passing run reads as a pass (issue 25): no warning or error line that a reader takes for a failure comes from the
 * build itself or from a test that retries on purpose.
 */
@ExtendWith(OutputCaptureExtension.class)
class QuietPassingRunTests {

    static final String ALLOW_UNSAFE = "--sun-misc-unsafe-memory-access=allow";

    /**
     * Maven's own Guice and Guava call {@code sun.misc.Unsafe}, which Java 25 reports in four WARNING lines at the top
     * of every {@code ./mvnw} run unless allowed. A JDK before 23 does not know the option and would not start Maven
     * at all; {@code -XX:+IgnoreUnrecognizedVMOptions} before it lets such a JDK reach the enforcer's "readygate needs
     * Java 25". The file is one line: Maven 3.9 joins its lines and has no comments in it.
     */
    @Test
    void mavenItselfRunsWithSunMiscUnsafeAllowed() throws IOException {
        List<String> options =
                List.of(Files.readString(Path.of(".mvn/jvm.config")).strip().split("\\s+"));

        assertThat(options).contains(ALLOW_UNSAFE, "-XX:+IgnoreUnrecognizedVMOptions");
        assertThat(options.indexOf("-XX:+IgnoreUnrecognizedVMOptions")).isLessThan(options.indexOf(ALLOW_UNSAFE));
    }

    /** BlockHound's shaded ByteBuddy does the same in every test JVM: Surefire's and Failsafe's argLine allow it. */
    @Test
    void everyTestJvmRunsWithSunMiscUnsafeAllowed() throws IOException {
        String pom = Files.readString(Path.of("pom.xml"));
        Matcher blockhound = Pattern.compile("<blockhound.argLine>([^<]*)</blockhound.argLine>")
                .matcher(pom);
        assertThat(blockhound.find()).isTrue();
        assertThat(blockhound.group(1)).contains(ALLOW_UNSAFE);
        Matcher argLines = Pattern.compile("<argLine>([^<]*)</argLine>").matcher(pom);
        int plugins = 0;
        while (argLines.find()) {
            assertThat(argLines.group(1)).contains("${blockhound.argLine}");
            plugins++;
        }
        assertThat(plugins).as("Surefire's and Failsafe's argLine").isEqualTo(2);
    }

    /**
     * A {@code WebTestClient} expectation that fails logs "ERROR ... Request details for assertion failure" with the
     * whole exchange before it throws; retried by Awaitility until the engine answers, each miss prints one such
     * block in a run that passes. Tests that wait for an answer poll its status and assert once they have it.
     */
    @Test
    void noTestRetriesAWebTestClientExpectation() throws IOException {
        Pattern retried =
                Pattern.compile("untilAsserted\\(\\s*\\(\\)\\s*->[^;]*?\\.expect(Status|Header|Body)\\(\\)[^;]*?\\.is");
        List<String> found = new ArrayList<>();
        try (Stream<Path> sources = Files.walk(Path.of("src/test/java"))) {
            for (Path source : sources.filter(path -> path.toString().endsWith(".java"))
                    .sorted()
                    .toList()) {
                Matcher matcher = retried.matcher(Files.readString(source));
                while (matcher.find()) {
                    found.add(source + ": " + matcher.group().replaceAll("\\s+", " "));
                }
            }
        }
        assertThat(found).as("WebTestClient expectations retried by Awaitility").isEmpty();
    }

    /**
     * The configuration tests start readygate's settings with a bad value on purpose, many times over, and read the
     * refusal from the failure itself ({@link SettingsStart}): Spring Boot's "APPLICATION FAILED TO START" report,
     * logged at ERROR, is not printed for them. The tests that check that report start readygate as the jar does.
     */
    @Test
    void aStartRefusedOnPurposePrintsNoFailureReport(CapturedOutput output) {
        SettingsStart.Outcome.Failed refused = SettingsStart.settings()
                .args("--readygate.probe.representative.prompt-tokens=-5")
                .start()
                .failed();

        assertThat(refused.description()).contains("readygate.probe.representative.prompt-tokens");
        assertThat(output).doesNotContain("APPLICATION FAILED TO START");
    }
}
