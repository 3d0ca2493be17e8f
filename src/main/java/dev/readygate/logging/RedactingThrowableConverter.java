package dev.readygate.logging;

import ch.qos.logback.classic.spi.IThrowableProxy;
import dev.readygate.secret.SecretRedaction;
import org.springframework.boot.logging.logback.ExtendedWhitespaceThrowableProxyConverter;

/**
 * Spring Boot's {@code %wEx} (a stack trace set off by blank lines), through {@link SecretRedaction}: an exception's
 * message (a URL with user information, an echoed argument) never shows a secret.
 */
public final class RedactingThrowableConverter extends ExtendedWhitespaceThrowableProxyConverter {

    @Override
    protected String throwableProxyToString(IThrowableProxy proxy) {
        return SecretRedaction.redact(super.throwableProxyToString(proxy));
    }
}
