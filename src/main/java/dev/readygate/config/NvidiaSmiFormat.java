package dev.readygate.config;

import java.util.Locale;
import org.springframework.boot.context.properties.ConfigurationPropertiesBinding;
import org.springframework.core.convert.converter.Converter;
import org.springframework.stereotype.Component;

/** What {@code nvidia-smi} is asked for ({@code readygate.gpu.nvidia-smi-format}). */
public enum NvidiaSmiFormat {
    /** Two CSV queries: {@code --query-gpu} and {@code --query-compute-apps}. */
    CSV,
    /** One {@code -q -x} run: the full XML report, processes included. */
    XML;

    /** Binds {@code csv} or {@code xml}; anything else fails at start naming the key. */
    @Component
    @ConfigurationPropertiesBinding
    public static class Binding implements Converter<String, NvidiaSmiFormat> {

        @Override
        public NvidiaSmiFormat convert(String source) {
            for (NvidiaSmiFormat format : values()) {
                if (format.name().toLowerCase(Locale.ROOT).equals(source.trim().toLowerCase(Locale.ROOT))) {
                    return format;
                }
            }
            throw new IllegalArgumentException(
                    "readygate.gpu.nvidia-smi-format must be csv or xml (was " + source + ")");
        }
    }
}
