package dev.readygate.config;

import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationPropertiesBinding;
import org.springframework.core.convert.TypeDescriptor;
import org.springframework.core.convert.converter.GenericConverter;
import org.springframework.stereotype.Component;

/**
 * Binds {@code readygate.probe.representative.prompt-tokens} from what a user writes: {@code 512}, {@code 0.25} or
 * {@code 25%} as text (properties, the command line, environment variables, quoted YAML), and {@code 2048} or
 * {@code 0.25} as the Integer or Double an unquoted YAML scalar becomes.
 */
@Component
@ConfigurationPropertiesBinding
public class TokenBudgetConverter implements GenericConverter {

    @Override
    public Set<ConvertiblePair> getConvertibleTypes() {
        return Set.of(
                new ConvertiblePair(String.class, TokenBudget.class),
                new ConvertiblePair(Number.class, TokenBudget.class));
    }

    @Override
    public @Nullable Object convert(@Nullable Object source, TypeDescriptor sourceType, TypeDescriptor targetType) {
        return switch (source) {
            case null -> null;
            case Number number -> TokenBudget.of(number);
            default -> TokenBudget.parse(source.toString());
        };
    }
}
