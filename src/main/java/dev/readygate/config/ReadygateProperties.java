package dev.readygate.config;

import jakarta.validation.Valid;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * readygate's configuration, {@code readygate.*}.
 *
 * @param engine the vLLM engine readygate gates
 * @param stateDir where readygate keeps what must survive its own restarts
 */
@ConfigurationProperties("readygate")
@Validated
public record ReadygateProperties(
        @Valid @DefaultValue Engine engine,
        @DefaultValue("./state") Path stateDir) {

    /**
     * The engine and how readygate talks to it.
     *
     * @param baseUrl the engine's base URL, e.g. {@code http://127.0.0.1:8000}; required: a sidecar that does not know
     *     its engine must not start (the demo profile points it at the embedded simulator)
     * @param connectTimeout TCP connect timeout (a refused connection fails at once regardless)
     * @param requestTimeout timeout of the cheap calls ({@code /health}, {@code /v1/models}, {@code /metrics}, ...)
     * @param maxBodySize the largest response body readygate reads; a larger one is abandoned as
     *     {@code body_too_large} (streams: the largest single event and the whole stream)
     * @param apiKeyFile a file holding the engine's API key (vLLM's {@code --api-key}), sent as {@code Authorization:
     *     Bearer}; read at start, never logged
     * @param apiKeyEnv the name of an environment variable holding the API key (used when no file is set)
     */
    public record Engine(
            @Nullable URI baseUrl,
            @DefaultValue("500ms") Duration connectTimeout,
            @DefaultValue("2s") Duration requestTimeout,
            @DefaultValue("4MB") DataSize maxBodySize,
            @Nullable Path apiKeyFile,
            @Nullable String apiKeyEnv) {

        public Engine {
            if (baseUrl == null) {
                throw new IllegalArgumentException("readygate.engine.base-url is not set: point it at the vLLM engine"
                        + " this sidecar gates (e.g. http://127.0.0.1:8000), or run with the demo profile"
                        + " (--spring.profiles.active=demo) to gate the embedded simulator");
            }
            String scheme = baseUrl.getScheme();
            if (scheme == null || baseUrl.getHost() == null || !(scheme.equals("http") || scheme.equals("https"))) {
                throw new IllegalArgumentException("readygate.engine.base-url must be an http(s) URL with a host, e.g."
                        + " http://127.0.0.1:8000 (was " + baseUrl + ")");
            }
            requirePositive("readygate.engine.connect-timeout", connectTimeout);
            requirePositive("readygate.engine.request-timeout", requestTimeout);
            if (maxBodySize.toBytes() < 1024) {
                throw new IllegalArgumentException(
                        "readygate.engine.max-body-size must be at least 1KB (was " + maxBodySize + ")");
            }
        }

        /** The base URL, known to be set once the record exists. */
        public URI requiredBaseUrl() {
            return java.util.Objects.requireNonNull(baseUrl);
        }
    }

    static void requirePositive(String key, Duration duration) {
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(key + " must be positive (was " + duration + ")");
        }
    }
}
