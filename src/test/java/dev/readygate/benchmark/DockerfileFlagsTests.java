package dev.readygate.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The benchmarks report the JVM flags the image and the chart ship: the Dockerfile, the chart's gateway mode and the
 * harness must not drift apart.
 */
class DockerfileFlagsTests {

    private static final Pattern JDK_JAVA_OPTIONS = Pattern.compile("JDK_JAVA_OPTIONS=\"([^\"]*)\"");

    @Test
    void theImageRunsTheFlagsTheBenchmarksMeasure() throws IOException {
        assertThat(dockerfileFlags()).containsExactlyElementsOf(FootprintStage.IMAGE);
    }

    @Test
    void theImageStartsWithTheCacheItsBuildTrains() throws IOException {
        String dockerfile = Files.readString(Path.of("Dockerfile"));

        assertThat(dockerfile)
                .contains("-XX:AOTCacheOutput=/app/readygate.aot -jar readygate.jar aot-training")
                .contains(
                        "ENTRYPOINT [\"java\", \"-XX:AOTCache=/app/readygate.aot\", \"-jar\", \"/app/readygate.jar\"]");
    }

    @Test
    @SuppressWarnings("unchecked")
    void theChartsGatewayModeRunsTheFlagsTheGatewayBenchmarkMeasures() throws IOException {
        Map<String, Object> values = new Yaml(new SafeConstructor(new LoaderOptions()))
                .load(Files.readString(Path.of("charts/readygate/values.yaml")));
        String options = (String) ((Map<String, Object>) values.get("gateway")).get("jdkJavaOptions");

        List<String> flags = Arrays.asList(options.trim().split("\\s+"));
        assertThat(flags).containsExactlyElementsOf(FootprintStage.GATEWAY_IMAGE);
        // The image's own flags, in their order, but for the compiler's and the code cache's.
        assertThat(flags)
                .containsSubsequence(dockerfileFlags().stream()
                        .filter(flag -> !flag.startsWith("-XX:TieredStopAtLevel")
                                && !flag.startsWith("-XX:ReservedCodeCacheSize"))
                        .toList())
                .contains("-XX:ReservedCodeCacheSize=64m")
                .noneMatch(flag -> flag.startsWith("-XX:TieredStopAtLevel"))
                .hasSize(dockerfileFlags().size() - 1);
    }

    /** The one {@code ENV JDK_JAVA_OPTIONS} of the Dockerfile, flag by flag. */
    private static List<String> dockerfileFlags() throws IOException {
        Matcher options = JDK_JAVA_OPTIONS.matcher(Files.readString(Path.of("Dockerfile")));
        assertThat(options.find()).as("ENV JDK_JAVA_OPTIONS in the Dockerfile").isTrue();
        List<String> flags = Arrays.asList(options.group(1).trim().split("\\s+"));
        assertThat(options.find()).as("a second JDK_JAVA_OPTIONS").isFalse();
        return flags;
    }
}
