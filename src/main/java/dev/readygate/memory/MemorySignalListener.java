package dev.readygate.memory;

import java.util.Set;

/** Told about every new memory assessment (metrics record it). */
@FunctionalInterface
public interface MemorySignalListener {

    /**
     * @param assessment the new assessment
     * @param raised the signals that fire now and did not before
     */
    void assessed(MemoryAssessment assessment, Set<MemorySignal> raised);
}
