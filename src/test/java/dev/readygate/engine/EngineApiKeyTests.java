package dev.readygate.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import dev.readygate.config.InvalidSettingsException;
import dev.readygate.config.ReadygateProperties;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpHeaders;
import org.springframework.util.unit.DataSize;

/** {@link EngineApiKey}: where the key comes from, how it fails at start, and that it never shows. */
class EngineApiKeyTests {

    static final String KEY = "sk-vllm-0123456789abcdef";

    @TempDir
    Path dir;

    static ReadygateProperties.Engine engine(@Nullable Path file, @Nullable String env) {
        return new ReadygateProperties.Engine(
                URI.create("http://127.0.0.1:8000"),
                Duration.ofMillis(500),
                Duration.ofSeconds(2),
                DataSize.ofMegabytes(4),
                file,
                env,
                "auto",
                null);
    }

    static Function<String, @Nullable String> environment(Map<String, String> variables) {
        return variables::get;
    }

    static String authorization(EngineApiKey key) {
        HttpHeaders headers = new HttpHeaders();
        key.applyTo(headers);
        return headers.getFirst(HttpHeaders.AUTHORIZATION);
    }

    @Test
    void loadWhenFileIsSetReadsTheTrimmedKey() throws IOException {
        Path file = Files.writeString(dir.resolve("api-key"), "  " + KEY + "\n");

        EngineApiKey key = EngineApiKey.load(engine(file, null), environment(Map.of()));

        assertThat(key.isPresent()).isTrue();
        assertThat(authorization(key)).isEqualTo("Bearer " + KEY);
    }

    @Test
    void loadWhenFileAndEnvironmentAreSetPrefersTheFile() throws IOException {
        Path file = Files.writeString(dir.resolve("api-key"), KEY);

        EngineApiKey key =
                EngineApiKey.load(engine(file, "VLLM_API_KEY"), environment(Map.of("VLLM_API_KEY", "other")));

        assertThat(authorization(key)).isEqualTo("Bearer " + KEY);
    }

    @Test
    void loadWhenOnlyEnvironmentIsSetReadsTheNamedVariable() {
        EngineApiKey key =
                EngineApiKey.load(engine(null, "VLLM_API_KEY"), environment(Map.of("VLLM_API_KEY", " " + KEY + " ")));

        assertThat(authorization(key)).isEqualTo("Bearer " + KEY);
    }

    @Test
    void loadWhenTheNamedVariableIsUnsetReturnsNoKey() {
        EngineApiKey key = EngineApiKey.load(engine(null, "VLLM_API_KEY"), environment(Map.of()));

        assertThat(key.isPresent()).isFalse();
        assertThat(authorization(key)).isNull();
    }

    @Test
    void loadWhenNothingIsConfiguredReturnsNoKey() {
        assertThat(EngineApiKey.load(engine(null, null), environment(Map.of("VLLM_API_KEY", KEY)))
                        .isPresent())
                .isFalse();
    }

    @Test
    void loadWhenFileIsMissingFailsNamingTheKeyAndThePath() {
        Path missing = dir.resolve("missing");

        assertThatExceptionOfType(InvalidSettingsException.class)
                .isThrownBy(() -> EngineApiKey.load(engine(missing, null), environment(Map.of())))
                .withMessage(
                        "readygate.engine.api-key-file: cannot be read: there is no such file (was " + missing + ")");
    }

    @Test
    void aDirectoryIsRefusedWhenTheSettingsAreBound() {
        // A directory: unreadable as a file even for root, which ignores permission bits.
        assertThatIllegalArgumentException()
                .isThrownBy(() -> engine(dir, null))
                .withMessage("readygate.engine.api-key-file must name a file, and names a directory (was " + dir + ")");
    }

    @Test
    void loadWhenFileIsEmptyFailsNamingTheKeyAndThePath() throws IOException {
        Path blank = Files.writeString(dir.resolve("blank"), " \n\t\n");

        assertThatExceptionOfType(InvalidSettingsException.class)
                .isThrownBy(() -> EngineApiKey.load(engine(blank, null), environment(Map.of())))
                .withMessage("readygate.engine.api-key-file: is empty (was " + blank + ")");
    }

    @Test
    void loadWhenFileHoldsMoreThanTheKeyFailsWithoutShowingTheContent() throws IOException {
        Path twoLines = Files.writeString(dir.resolve("two-lines"), KEY + "\nsecond-line-secret\n");

        assertThatExceptionOfType(InvalidSettingsException.class)
                .isThrownBy(() -> EngineApiKey.load(engine(twoLines, null), environment(Map.of())))
                .withMessageStartingWith("readygate.engine.api-key-file: holds control characters")
                .withMessageEndingWith("(was " + twoLines + ")")
                .withMessageNotContaining(KEY)
                .withMessageNotContaining("second-line-secret");
    }

    @Test
    void toStringWhenKeyIsPresentNeverShowsIt() throws IOException {
        Path file = Files.writeString(dir.resolve("api-key"), KEY);

        EngineApiKey fromFile = EngineApiKey.load(engine(file, null), environment(Map.of()));
        EngineApiKey fromEnvironment =
                EngineApiKey.load(engine(null, "VLLM_API_KEY"), environment(Map.of("VLLM_API_KEY", KEY)));

        assertThat(fromFile).hasToString("EngineApiKey[present, from readygate.engine.api-key-file " + file + "]");
        assertThat(fromEnvironment)
                .hasToString("EngineApiKey[present, from readygate.engine.api-key-env VLLM_API_KEY]");
        assertThat(EngineApiKey.of(KEY).toString()).doesNotContain(KEY);
        assertThat(EngineApiKey.none()).hasToString("EngineApiKey[none]");
    }
}
