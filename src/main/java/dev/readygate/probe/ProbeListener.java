package dev.readygate.probe;

/** Told about every heavy probe report (metrics record them). */
@FunctionalInterface
public interface ProbeListener {

    void probed(ProbeReport report);
}
