package dev.readygate.check;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.engine.EngineClient;
import java.io.PrintStream;
import java.time.Clock;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.Configuration;

/**
 * {@code java -jar readygate.jar check --readygate.engine.base-url=http://127.0.0.1:8000 ...}: binds readygate's
 * configuration exactly as the sidecar does (arguments, environment, {@code ./config/application.yaml}), runs
 * {@link EngineCheck} once and prints its report. Exit status: 0 when readygate would gate this engine correctly, 1
 * when it would not, 2 when the configuration itself is wrong, 3 when it would gate it with the limits the report's
 * problems and warnings name ({@link CheckReport.Verdict}).
 */
public final class CheckLauncher {

    /** The first command-line argument that selects the check. */
    public static final String COMMAND = "check";

    static final int BAD_CONFIGURATION = 2;

    private CheckLauncher() {}

    /**
     * Only what the check needs: the configuration, bound and guarded as the sidecar's (its converters, unknown-setting
     * checks), the clock and the engine client.
     */
    @Configuration(proxyBeanMethods = false)
    @ConfigurationPropertiesScan(basePackageClasses = ReadygateProperties.class)
    @ComponentScan(basePackageClasses = {ReadygateProperties.class, EngineClient.class})
    static class CheckConfiguration {}

    /** Runs the check with {@code args} and prints the report to {@code out}; returns the exit status. */
    public static int run(String[] args, PrintStream out) {
        ConfigurableApplicationContext context;
        try {
            context = new SpringApplicationBuilder(CheckConfiguration.class)
                    .web(WebApplicationType.NONE)
                    .bannerMode(Banner.Mode.OFF)
                    .logStartupInfo(false)
                    // The configuration problem is printed once, plainly: no stack trace from Spring's failure report.
                    .properties(
                            "logging.level.root=WARN",
                            "logging.level.dev.readygate=WARN",
                            "logging.level.org.springframework.boot.SpringApplication=OFF",
                            "logging.level.org.springframework.boot.diagnostics=OFF",
                            "logging.level.org.springframework.context=ERROR",
                            "logging.level.dev.readygate.config=ERROR")
                    .run(args);
        } catch (RuntimeException e) {
            out.println("readygate check: configuration problem: " + rootMessage(e));
            out.println("verdict: readygate cannot start with this configuration (exit " + BAD_CONFIGURATION + ")");
            return BAD_CONFIGURATION;
        }
        try (context) {
            CheckReport report = new EngineCheck(
                            context.getBean(ReadygateProperties.class),
                            context.getBean(EngineClient.class),
                            context.getBean(Clock.class))
                    .run();
            out.print(report.render());
            return report.verdict().exitStatus();
        }
    }

    /** The innermost message: Spring wraps a binding failure several times; the record's own message names the key. */
    static String rootMessage(Throwable error) {
        Throwable cause = error;
        String message = error.getMessage();
        while (cause != null) {
            if (cause.getMessage() != null && !cause.getMessage().isBlank()) {
                message = cause.getMessage();
            }
            cause = cause.getCause() == cause ? null : cause.getCause();
        }
        return message == null ? error.getClass().getSimpleName() : message.strip();
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out));
    }
}
