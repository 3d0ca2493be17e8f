package dev.readygate.config;

import jakarta.validation.Valid;
import java.net.URI;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
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
     * The engine.
     *
     * @param baseUrl the engine's base URL, e.g. {@code http://127.0.0.1:8000}; required: a sidecar that does not know
     *     its engine must not start (the demo profile points it at the embedded simulator)
     */
    public record Engine(@Nullable URI baseUrl) {

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
        }

        /** The base URL, known to be set once the record exists. */
        public URI requiredBaseUrl() {
            return java.util.Objects.requireNonNull(baseUrl);
        }
    }
}
