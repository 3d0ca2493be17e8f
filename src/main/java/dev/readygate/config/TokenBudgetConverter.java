package dev.readygate.config;

import org.springframework.boot.context.properties.ConfigurationPropertiesBinding;
import org.springframework.core.convert.converter.Converter;
import org.springframework.stereotype.Component;

/** Binds {@code readygate.probe.representative.prompt-tokens} ({@code 512}, {@code 0.25} or {@code 25%}). */
@Component
@ConfigurationPropertiesBinding
public class TokenBudgetConverter implements Converter<String, TokenBudget> {

    @Override
    public TokenBudget convert(String source) {
        return TokenBudget.parse(source);
    }
}
