package dev.readygate.logging;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import ch.qos.logback.core.pattern.DynamicConverter;
import ch.qos.logback.core.pattern.PatternLayoutBase;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.context.logging.LoggingApplicationListener;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.event.SmartApplicationListener;

/**
 * Puts every pattern-based log appender (Spring Boot's console and file appenders, with whatever pattern is
 * configured) through the redaction policy, right after Spring Boot has set logging up: {@code %m} (and
 * {@code %msg}, {@code %message}) and the stack trace words ({@code %wEx}, {@code %wex}, {@code %ex}, ...) are
 * replaced by redacting converters. Registered in {@code META-INF/spring.factories}, so it runs for every
 * {@code SpringApplication}, before any bean (and any start-up failure) logs. Structured (JSON) log formats are not
 * covered: readygate logs lines.
 */
// Logback's converter maps hold the raw DynamicConverter type.
@SuppressWarnings("rawtypes")
public final class RedactingLogs implements SmartApplicationListener {

    private static final Map<String, Supplier<DynamicConverter>> CONVERTERS = Map.of(
            "m", RedactingMessageConverter::new,
            "msg", RedactingMessageConverter::new,
            "message", RedactingMessageConverter::new,
            "wEx", RedactingThrowableConverter::new,
            "wex", RedactingThrowableConverter::new,
            "ex", RedactingThrowableConverter::new,
            "exception", RedactingThrowableConverter::new,
            "throwable", RedactingThrowableConverter::new,
            "xEx", RedactingThrowableConverter::new);

    @Override
    public boolean supportsEventType(Class<? extends ApplicationEvent> eventType) {
        return ApplicationEnvironmentPreparedEvent.class.isAssignableFrom(eventType);
    }

    @Override
    public void onApplicationEvent(ApplicationEvent event) {
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
            apply(context);
        }
    }

    /** Just after Spring Boot's logging listener, which (re)creates the appenders. */
    @Override
    public int getOrder() {
        return LoggingApplicationListener.DEFAULT_ORDER + 1;
    }

    /** Makes every pattern-based appender of {@code context} redact. */
    public static void apply(LoggerContext context) {
        for (Logger logger : context.getLoggerList()) {
            for (Iterator<Appender<ILoggingEvent>> appenders = logger.iteratorForAppenders(); appenders.hasNext(); ) {
                if (appenders.next() instanceof OutputStreamAppender<ILoggingEvent> appender) {
                    redacting(appender.getEncoder());
                }
            }
        }
    }

    private static void redacting(Encoder<ILoggingEvent> encoder) {
        if (!(encoder instanceof LayoutWrappingEncoder<ILoggingEvent> wrapping)
                || !(wrapping.getLayout() instanceof PatternLayoutBase<ILoggingEvent> layout)
                || layout.getInstanceConverterMap().get("m") instanceof RedactingSupplier) {
            return;
        }
        CONVERTERS.forEach(
                (word, converter) -> layout.getInstanceConverterMap().put(word, new RedactingSupplier(converter)));
        // The pattern is compiled when the layout starts: again, with the redacting converters.
        layout.stop();
        layout.start();
        if (encoder instanceof PatternLayoutEncoder patternEncoder && !patternEncoder.isStarted()) {
            patternEncoder.start();
        }
    }

    /** Marks the converters this class put in, so that applying it twice changes nothing. */
    private record RedactingSupplier(Supplier<DynamicConverter> converter) implements Supplier<DynamicConverter> {
        @Override
        public DynamicConverter get() {
            return converter.get();
        }
    }
}
