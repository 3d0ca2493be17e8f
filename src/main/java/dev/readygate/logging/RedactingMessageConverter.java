package dev.readygate.logging;

import ch.qos.logback.classic.pattern.MessageConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import dev.readygate.secret.SecretRedaction;

/** Logback's {@code %m}, through {@link SecretRedaction}: a message never shows a secret, whoever logged it. */
public final class RedactingMessageConverter extends MessageConverter {

    @Override
    public String convert(ILoggingEvent event) {
        return SecretRedaction.redact(super.convert(event));
    }
}
