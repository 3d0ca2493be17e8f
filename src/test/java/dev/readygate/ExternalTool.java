package dev.readygate;

import static org.assertj.core.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A program that some tests run and that Java does not bring. Each is taken from the system property
 * {@code readygate-test.<name>} (what {@code ./run-tests} passes to Maven), else the environment variable
 * {@code READYGATE_<NAME>}, else the {@code PATH}. A test class that needs one carries the tag of the same name, which
 * {@code ./mvnw verify -Pjava-only} leaves out (the pom's {@code readygate.test.tool-tags}); in every other run a
 * missing tool fails the test that needs it, saying where it looked and how to install it. Never a silent skip.
 */
public enum ExternalTool {
    /** Debian's headless Chromium: the status page in a real browser. */
    CHROMIUM("chromium", "Debian's chromium package (apt-get install chromium)"),
    /** Prometheus's rule and exposition checker. */
    PROMTOOL("promtool", "Debian's prometheus package (apt-get install --no-install-recommends prometheus)"),
    /** Prometheus itself, scraping readygate in an end-to-end test. */
    PROMETHEUS("prometheus", "Debian's prometheus package (apt-get install --no-install-recommends prometheus)"),
    /** Python 3's http.server, the fake preload daemon's health port in the chart's entrypoint tests. */
    PYTHON3("python3", "Debian's python3 package (apt-get install python3)"),
    /** nginx, one of the reverse proxies the gateway is measured beside (its configuration is checked by nginx). */
    NGINX("nginx", "Debian's nginx package (apt-get install nginx)"),
    /** HAProxy, the other reverse proxy the gateway is measured beside (its configuration is checked by HAProxy). */
    HAPROXY("haproxy", "Debian's haproxy package (apt-get install haproxy)"),
    /**
     * llama.cpp's {@code llama-server}, the real third-party engine of the real-engine suite. Not a Debian package:
     * {@code ./run-tests} builds it from llama.cpp's source (README, "The real-engine suite").
     */
    LLAMA_SERVER("llama-server", "llama.cpp's llama-server, built from its source (README, \"The real-engine suite\")");

    /** The tag of the end-to-end tests that need a Docker engine (found by Testcontainers, not here). */
    public static final String DOCKER_TAG = "docker";

    private final String name;
    private final String install;

    ExternalTool(String name, String install) {
        this.name = name;
        this.install = install;
    }

    /** The program's name on the PATH, and the JUnit tag of the tests that need it. */
    public String tag() {
        return name;
    }

    /**
     * {@code readygate-test.<name>}: the system property that names the program's path. Not under {@code readygate.}:
     * readygate refuses to start with a system property there that is none of its settings.
     */
    public String property() {
        return "readygate-test." + name;
    }

    /** {@code READYGATE_<NAME>}: the environment variable that names the program's path. */
    public String environmentVariable() {
        return "READYGATE_" + name.toUpperCase(Locale.ROOT).replace('-', '_');
    }

    /**
     * The program where it is configured or on the PATH, else empty; a configured path that is not a program fails the
     * test.
     */
    public Optional<Path> find() {
        String configured = configured();
        if (configured != null) {
            Path path = Path.of(configured);
            if (!Files.isExecutable(path)) {
                fail(name + ": " + configured + " (from " + source() + ") is not an executable file");
            }
            return Optional.of(path);
        }
        return onPath();
    }

    /** The program, or a failed test that says where it was looked for and how to get it. */
    public Path path() {
        return find().orElseGet(() -> fail(name + " not found: -D" + property() + " and " + environmentVariable()
                + " are unset and no " + name + " is on the PATH (" + System.getenv("PATH") + "). Install "
                + install + ", or run ./run-tests, which installs it; ./mvnw verify -Pjava-only leaves out"
                + " the tests that need it (README, \"The two commands\")."));
    }

    private @Nullable String configured() {
        String property = System.getProperty(property());
        if (property != null && !property.isBlank()) {
            return property;
        }
        String environment = System.getenv(environmentVariable());
        return environment != null && !environment.isBlank() ? environment : null;
    }

    private String source() {
        String property = System.getProperty(property());
        return property != null && !property.isBlank() ? "-D" + property() : environmentVariable();
    }

    private Optional<Path> onPath() {
        return Arrays.stream(System.getenv().getOrDefault("PATH", "").split(":"))
                .filter(entry -> !entry.isEmpty())
                .map(entry -> Path.of(entry, name))
                .filter(Files::isExecutable)
                .findFirst();
    }
}
