package dev.readygate.engine;

import io.netty.channel.ConnectTimeoutException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.Collection;
import java.util.Locale;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;
import reactor.netty.channel.AbortedException;
import reactor.netty.http.client.PrematureCloseException;

/**
 * Names what a transport exception from Reactor Netty or {@link EngineConnections} means for a call: refused,
 * reset, connect timeout or another I/O error. Only exceptions raised before a response arrived come here; failures
 * while reading a body are judged where the body is read.
 */
final class TransportFailures {

    private TransportFailures() {}

    /**
     * @param error what the exchange failed with (possibly wrapped, e.g. in a {@code WebClientRequestException})
     * @param call the call, e.g. {@code GET /health}, for the detail
     * @param connectTimeout the configured connect timeout, for the detail
     * @param secrets redacted from any exception text that ends up in the detail
     */
    static EngineFailure beforeResponse(
            Throwable error, String call, Duration connectTimeout, Collection<String> secrets) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof ConnectTimeoutException) {
                return EngineFailure.of(
                        EngineFailure.Kind.TIMED_OUT,
                        call + ": connect timed out after " + connectTimeout.toMillis() + " ms");
            }
            if (t instanceof ConnectException) {
                if (mentions(t, "refused")) {
                    return EngineFailure.of(
                            EngineFailure.Kind.REFUSED,
                            call + ": connection refused (the engine is down or still loading)");
                }
                return EngineFailure.of(EngineFailure.Kind.IO_ERROR, call + ": connect failed: " + message(t, secrets));
            }
            if (t instanceof PrematureCloseException || t instanceof AbortedException) {
                return EngineFailure.of(EngineFailure.Kind.RESET, call + ": connection closed before any response");
            }
            if (t instanceof ClosedChannelException || t instanceof EngineConnections.EngineClosed) {
                return EngineFailure.of(EngineFailure.Kind.RESET, call + ": connection closed before any response");
            }
            if (t instanceof IOException && mentions(t, "reset")) {
                return EngineFailure.of(EngineFailure.Kind.RESET, call + ": connection reset before any response");
            }
            if (t instanceof UnknownHostException) {
                return EngineFailure.of(EngineFailure.Kind.IO_ERROR, call + ": cannot resolve the engine's host");
            }
            if (t instanceof SSLException) {
                return EngineFailure.of(EngineFailure.Kind.IO_ERROR, call + ": TLS failed: " + message(t, secrets));
            }
        }
        return EngineFailure.of(EngineFailure.Kind.IO_ERROR, call + ": " + message(error, secrets));
    }

    /** How a connection ended while a body was being read: "reset", "closed" or "failed (...)". */
    static String endedHow(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof IOException && mentions(t, "reset")) {
                return "reset";
            }
            if (t instanceof PrematureCloseException
                    || t instanceof AbortedException
                    || t instanceof ClosedChannelException
                    || t instanceof EngineConnections.EngineClosed) {
                return "closed";
            }
        }
        return "failed (" + error.getClass().getSimpleName() + ")";
    }

    private static boolean mentions(Throwable t, String word) {
        String message = t.getMessage();
        return message != null && message.toLowerCase(Locale.ROOT).contains(word);
    }

    private static String message(Throwable t, Collection<String> secrets) {
        @Nullable String message = t.getMessage();
        String text = t.getClass().getSimpleName() + (message == null ? "" : ": " + message);
        return SafeDetail.of(text, secrets);
    }
}
