package dev.readygate.logging;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;

/**
 * A warning that can repeat many times a second (a TLS error on every probe, a bug on every tick) logged at most once
 * per {@code window} per key: the first occurrence is logged, the others in the window are counted, and the first one
 * after it is logged with how many were left out ({@code ... (212 more in the last minute)}). Keys are small closed
 * sets (a failure kind, a place), never messages. Time comes from the injected clock; thread-safe.
 */
public final class RateLimitedLog {

    private final Logger logger;
    private final Clock clock;
    private final Duration window;
    private final Map<String, Window> windows = new ConcurrentHashMap<>();

    /** One key's window: when it began and how many occurrences it left out. */
    private record Window(Instant start, long suppressed) {}

    public RateLimitedLog(Logger logger, Clock clock, Duration window) {
        if (window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("window must be positive (was " + window + ")");
        }
        this.logger = logger;
        this.clock = clock;
        this.window = window;
    }

    /**
     * Logs at WARN unless {@code key} was logged within the window; {@code arguments} as SLF4J takes them (a last
     * {@link Throwable} is the exception).
     */
    public void warn(String key, String format, Object... arguments) {
        if (!logger.isWarnEnabled()) {
            return;
        }
        Instant now = clock.instant();
        AtomicBoolean log = new AtomicBoolean();
        long[] left = {0};
        windows.compute(key, (k, current) -> {
            if (current == null || !now.isBefore(current.start().plus(window))) {
                log.set(true);
                left[0] = current == null ? 0 : current.suppressed();
                return new Window(now, 0);
            }
            return new Window(current.start(), current.suppressed() + 1);
        });
        if (!log.get()) {
            return;
        }
        if (left[0] == 0) {
            logger.warn(format, arguments);
            return;
        }
        boolean withThrowable = arguments.length > 0 && arguments[arguments.length - 1] instanceof Throwable;
        int plain = withThrowable ? arguments.length - 1 : arguments.length;
        Object[] counted = Arrays.copyOf(arguments, arguments.length + 2);
        counted[plain] = left[0];
        counted[plain + 1] = describe(window);
        if (withThrowable) {
            counted[plain + 2] = arguments[arguments.length - 1];
        }
        logger.warn(format + " ({} more in the last {})", counted);
    }

    private static String describe(Duration window) {
        if (window.equals(Duration.ofMinutes(1))) {
            return "minute";
        }
        if (window.toSeconds() % 60 == 0) {
            return window.toMinutes() + " minutes";
        }
        return window.toMillis() % 1000 == 0 ? window.toSeconds() + " s" : window.toMillis() + " ms";
    }
}
