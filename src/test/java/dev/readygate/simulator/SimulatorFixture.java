package dev.readygate.simulator;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A running simulator for tests outside this package: starts one on free loopback ports with test-sized timings
 * (as {@link RunningSimulator} does, which stays package-private), switches its faults and stops its engine.
 */
public final class SimulatorFixture implements AutoCloseable {

    private final RunningSimulator running;

    private SimulatorFixture(RunningSimulator running) {
        this.running = running;
    }

    /**
     * Starts a simulator and waits until its engine serves.
     *
     * @param workDir the simulator's work directory (a {@code @TempDir})
     * @param overrides {@code readygate.simulator.*} settings relative to that prefix, e.g. {@code api-key=s3cret}
     */
    public static SimulatorFixture serving(Path workDir, String... overrides) {
        return new SimulatorFixture(RunningSimulator.serving(workDir, overrides));
    }

    /** The engine's base URL, e.g. {@code http://127.0.0.1:43121}. */
    public URI engineUrl() {
        return URI.create("http://" + running.properties.host() + ":" + running.properties.port());
    }

    /** Switches a fault on for inference requests only ({@code /health} and the rest still answer). */
    public void fault(Fault fault) {
        running.simulator.setFault(fault, true, FaultSet.Scope.INFERENCE);
    }

    /** Switches a fault on for every request on the engine port. */
    public void faultEverywhere(Fault fault) {
        running.simulator.setFault(fault, true, FaultSet.Scope.ALL);
    }

    public void clearFaults() {
        running.simulator.faults().clear();
    }

    /** Stops the engine process and waits until its port refuses connections. */
    public void stopEngine() {
        running.simulator.engine().stop().block(Duration.ofSeconds(10));
    }

    /** The served model's name, as requests must name it. */
    public String servedModelName() {
        return running.properties.model().servedModelName();
    }

    @Override
    public void close() {
        running.close();
    }
}
