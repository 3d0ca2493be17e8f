package dev.readygate.engine;

import dev.readygate.config.InvalidSettingsException;
import dev.readygate.config.ReadygateProperties;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;

/**
 * The engine's optional API key (vLLM's {@code --api-key}), read once at start from
 * {@code readygate.engine.api-key-file} or else from the environment variable named by
 * {@code readygate.engine.api-key-env}. {@link WebClientEngineClient} sends it as {@code Authorization: Bearer}; it is
 * never logged, shown or put in a failure detail.
 */
final class EngineApiKey {

    private static final Logger logger = LoggerFactory.getLogger(EngineApiKey.class);

    /** An API key is a short token; a larger file is a misconfigured path (think {@code /dev/zero}). */
    private static final int MAX_FILE_BYTES = 16 * 1024;

    private static final EngineApiKey NONE = new EngineApiKey(null, "none");

    private static final String FILE_KEY = "readygate.engine.api-key-file";

    private static final String HOLDS_MORE =
            "holds control characters (more than one line?): it must hold the key alone";

    private final @Nullable String key;
    private final String source;

    private EngineApiKey(@Nullable String key, String source) {
        this.key = key;
        this.source = source;
    }

    /** No key: requests carry no {@code Authorization} header. */
    public static EngineApiKey none() {
        return NONE;
    }

    /** A key given directly (tests, programmatic use); surrounding whitespace is trimmed. */
    public static EngineApiKey of(String key) {
        return new EngineApiKey(validated(key.strip(), "the API key"), "given");
    }

    /**
     * Reads the key as configured: from {@code api-key-file} when set (an unreadable, empty or oversized file fails
     * here, at start), else from the variable {@code api-key-env} names (unset or blank means no key), else none.
     *
     * @param engine the engine settings
     * @param environment looks up an environment variable ({@code System::getenv} outside tests)
     * @throws InvalidSettingsException when the file cannot be read, is empty, too large or not UTF-8, or the file or
     *     the variable holds more than the key (a line break or another control character): a refused setting,
     *     named by its key and the file or variable (never the key's text) in the start's failure report
     */
    public static EngineApiKey load(ReadygateProperties.Engine engine, Function<String, @Nullable String> environment) {
        Path file = engine.apiKeyFile();
        if (file != null) {
            if (engine.apiKeyEnv() != null) {
                logger.info(
                        "readygate.engine.api-key-file is set: ignoring readygate.engine.api-key-env ({})",
                        engine.apiKeyEnv());
            }
            EngineApiKey fromFile = new EngineApiKey(readFile(file), "readygate.engine.api-key-file " + file);
            logger.info("Engine API key read from {}", fromFile.source);
            return fromFile;
        }
        String variable = engine.apiKeyEnv();
        if (variable != null && !variable.isBlank()) {
            String value = environment.apply(variable);
            if (value == null || value.isBlank()) {
                logger.info(
                        "readygate.engine.api-key-env names {}, which is not set: calling the engine without an API"
                                + " key",
                        variable);
                return NONE;
            }
            String key = value.strip();
            if (hasControlCharacters(key)) {
                throw refused("readygate.engine.api-key-env", HOLDS_MORE, variable);
            }
            EngineApiKey fromEnvironment = new EngineApiKey(key, "readygate.engine.api-key-env " + variable);
            logger.info("Engine API key read from {}", fromEnvironment.source);
            return fromEnvironment;
        }
        return NONE;
    }

    /** A refused setting, said as every other: {@code <key>: <problem> (was <file or variable>)}. */
    private static InvalidSettingsException refused(String settingKey, String problem, Object value) {
        return InvalidSettingsException.refused(settingKey + ": " + problem + " (was " + value + ")");
    }

    private static String readFile(Path file) {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_FILE_BYTES + 1);
        } catch (NoSuchFileException ex) {
            throw refused(FILE_KEY, "cannot be read: there is no such file", file);
        } catch (AccessDeniedException ex) {
            throw refused(FILE_KEY, "cannot be read: permission denied", file);
        } catch (IOException ex) {
            // The exception's class says enough; its message could only add the path.
            throw refused(FILE_KEY, "cannot be read (" + ex.getClass().getSimpleName() + ")", file);
        }
        if (bytes.length > MAX_FILE_BYTES) {
            throw refused(FILE_KEY, "is larger than " + MAX_FILE_BYTES + " bytes, so it is not an API key file", file);
        }
        String text;
        try {
            text = StandardCharsets.UTF_8
                    .newDecoder()
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException ex) {
            throw refused(FILE_KEY, "is not UTF-8 text", file);
        }
        String key = text.strip();
        if (key.isEmpty()) {
            throw refused(FILE_KEY, "is empty", file);
        }
        if (hasControlCharacters(key)) {
            throw refused(FILE_KEY, HOLDS_MORE, file);
        }
        return key;
    }

    private static String validated(String key, String source) {
        if (key.isEmpty()) {
            throw new IllegalArgumentException(source + " is empty");
        }
        if (hasControlCharacters(key)) {
            throw new IllegalArgumentException(source + " " + HOLDS_MORE);
        }
        return key;
    }

    /** A line break or other control character inside the key would corrupt the Authorization header. */
    private static boolean hasControlCharacters(String key) {
        return key.chars().anyMatch(c -> c < 0x20 || c == 0x7f);
    }

    /** Whether a key is configured. */
    public boolean isPresent() {
        return key != null;
    }

    /** Sets {@code Authorization: Bearer <key>} when a key is present. */
    void applyTo(HttpHeaders headers) {
        if (key != null) {
            headers.setBearerAuth(key);
        }
    }

    /** Sets {@code Authorization: Bearer <key>} on a plain request ({@link PlainGets}) when a key is present. */
    void applyTo(io.netty.handler.codec.http.HttpHeaders headers) {
        if (key != null) {
            headers.set(io.netty.handler.codec.http.HttpHeaderNames.AUTHORIZATION, "Bearer " + key);
        }
    }

    /** The key as a secret to redact from failure details; empty when there is none. */
    List<String> secrets() {
        return key == null ? List.of() : List.of(key);
    }

    /** Says where the key came from, never what it is. */
    @Override
    public String toString() {
        return "EngineApiKey[" + (key == null ? "none" : "present, from " + source) + "]";
    }
}
