package dev.readygate.logging;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationStartingEvent;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.event.SmartApplicationListener;
import reactor.core.publisher.Hooks;
import reactor.netty.channel.AbortedException;
import reactor.netty.http.client.PrematureCloseException;

/**
 * What Reactor does with an error that arrives after its subscriber has gone (Reactor's "dropped" errors). By default
 * Reactor logs each one at ERROR with a stack trace ("Operator called default onErrorDropped"). Some are the expected
 * end of a request readygate itself gave up on: a probe's timeout cancels the exchange just as Reactor Netty starts
 * reading the answer's body, and the body then fails with "released already due to cancellation", or the connection
 * it closed reports its own closing. Those are logged at DEBUG, since the request was already recorded as a timeout
 * where it was given up. Any other dropped error is still a warning, with its stack trace (redacted as every line is).
 * Registered in {@code META-INF/spring.factories}, so it applies to every {@code SpringApplication} of the jar.
 */
public final class DroppedErrors implements SmartApplicationListener {

    private static final Logger LOG = LoggerFactory.getLogger(DroppedErrors.class);

    private static final Consumer<Throwable> HOOK = DroppedErrors::log;

    /** Reactor's hooks add up: installed twice, each dropped error would be logged twice. */
    private static final AtomicBoolean INSTALLED = new AtomicBoolean();

    @Override
    public boolean supportsEventType(Class<? extends ApplicationEvent> eventType) {
        return ApplicationStartingEvent.class.isAssignableFrom(eventType);
    }

    @Override
    public void onApplicationEvent(ApplicationEvent event) {
        install();
    }

    /** Installs the hook once per JVM, whatever the number of applications started in it. */
    public static void install() {
        if (INSTALLED.compareAndSet(false, true)) {
            Hooks.onErrorDropped(HOOK);
        }
    }

    static void log(Throwable error) {
        if (afterCancellation(error)) {
            LOG.debug("An answer's body failed after readygate had given up on its request: {}", error.toString());
            return;
        }
        LOG.warn("An error arrived after its subscriber had gone (Reactor dropped it)", error);
    }

    /** Whether {@code error} is the expected end of an exchange readygate cancelled (a timeout, a client gone). */
    static boolean afterCancellation(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof AbortedException || cause instanceof PrematureCloseException) {
                return true;
            }
            if (cause instanceof IllegalStateException
                    && cause.getMessage() != null
                    && cause.getMessage().contains("released already due to cancellation")) {
                return true;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }
}
