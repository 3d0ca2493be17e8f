package dev.readygate.simulator;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * One daemon thread running tasks in the order they were handed over, handed over without blocking: the simulator's
 * event loops hand it work (log lines, GPU readings, restarts), and {@code Executors.newSingleThreadExecutor}'s
 * {@code LinkedBlockingQueue} takes a lock to enqueue, which parks the event loop when the queue is contended (BlockHound
 * saw it on a loaded machine). A {@link LinkedTransferQueue} enqueues lock-free, and the thread is started here, not
 * by the first task.
 */
final class SerialExecutor {

    private SerialExecutor() {}

    static ExecutorService start(String threadName) {
        ThreadPoolExecutor executor =
                new ThreadPoolExecutor(1, 1, 0L, TimeUnit.MILLISECONDS, new LinkedTransferQueue<>(), runnable -> {
                    Thread thread = new Thread(runnable, threadName);
                    thread.setDaemon(true);
                    return thread;
                });
        executor.prestartCoreThread();
        return executor;
    }
}
