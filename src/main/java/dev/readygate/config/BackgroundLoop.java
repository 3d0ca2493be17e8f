package dev.readygate.config;

import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import reactor.core.Disposable;

/**
 * A loop that runs in the background while readygate runs (a log tail, the GPU memory monitor, the probe schedule),
 * started and stopped by the application's lifecycle: the one place readygate's loops get theirs. Readers of what the
 * engine leaves behind start before the web server and the probes, and stop after them.
 */
public final class BackgroundLoop implements SmartLifecycle {

    /** The phase of the readers (log tails, the GPU memory monitor): running before the first probe, until the last. */
    public static final int READERS = SmartLifecycle.DEFAULT_PHASE - 4096;

    /** The phase of the probe schedule: last to start, first to stop. */
    public static final int PROBES = SmartLifecycle.DEFAULT_PHASE;

    private static final Logger logger = LoggerFactory.getLogger(BackgroundLoop.class);

    private final String name;
    private final int phase;
    private final Supplier<Disposable> loop;
    private @Nullable Disposable running;

    /**
     * @param name what runs, for the log
     * @param phase {@link #READERS} or {@link #PROBES}
     * @param loop subscribes to the loop; disposing its subscription stops it
     */
    public BackgroundLoop(String name, int phase, Supplier<Disposable> loop) {
        this.name = name;
        this.phase = phase;
        this.loop = loop;
    }

    @Override
    public synchronized void start() {
        if (running == null) {
            running = loop.get();
            logger.debug("Started the {}", name);
        }
    }

    @Override
    public synchronized void stop() {
        Disposable subscription = running;
        running = null;
        if (subscription != null) {
            subscription.dispose();
            logger.debug("Stopped the {}", name);
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return running != null;
    }

    @Override
    public int getPhase() {
        return phase;
    }
}
