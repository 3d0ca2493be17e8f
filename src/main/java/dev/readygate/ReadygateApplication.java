package dev.readygate;

import dev.readygate.check.AcceptLauncher;
import dev.readygate.check.CheckLauncher;
import dev.readygate.demo.DemoBuiltAtRunTime;
import dev.readygate.simulator.SimulatorLauncher;
import java.util.Arrays;
import org.springframework.aot.AotDetector;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.FilterType;

/**
 * readygate's entry point: the verified-readiness sidecar; with {@code simulate} as first argument, the standalone vLLM
 * engine simulator; with {@code check}, the one-shot check of an engine ({@link CheckLauncher}); with
 * {@code accept-model}, the operator's acceptance of the model the engine serves now ({@link AcceptLauncher}); with
 * {@code aot-training}, the image build's training run for the JDK's AOT cache ({@link AotTraining}).
 */
@SpringBootApplication
@ConfigurationPropertiesScan(basePackages = "dev.readygate.config")
@ComponentScan(
        excludeFilters =
                @ComponentScan.Filter(type = FilterType.REGEX, pattern = "dev\\.readygate\\.(simulator|check)\\..*"))
public class ReadygateApplication {

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals(SimulatorLauncher.COMMAND)) {
            // Only the sidecar's context is AOT-processed; the image's -Dspring.aot.enabled=true is not for this one.
            System.setProperty(AotDetector.AOT_ENABLED, "false");
            SimulatorLauncher.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 0 && args[0].equals(CheckLauncher.COMMAND)) {
            // As for the simulator: the check's own small context is not the AOT-processed sidecar's.
            System.setProperty(AotDetector.AOT_ENABLED, "false");
            CheckLauncher.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 0 && args[0].equals(AcceptLauncher.COMMAND)) {
            System.setProperty(AotDetector.AOT_ENABLED, "false");
            AcceptLauncher.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        SpringApplication application = new SpringApplication(ReadygateApplication.class);
        application.addListeners(new DemoBuiltAtRunTime());
        if (args.length > 0 && args[0].equals(AotTraining.COMMAND)) {
            System.exit(AotTraining.run(application, Arrays.copyOfRange(args, 1, args.length))
                    .exitCode());
        }
        application.run(args);
    }
}
