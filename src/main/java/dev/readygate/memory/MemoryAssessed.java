package dev.readygate.memory;

import java.util.Set;

/**
 * Published after every memory assessment.
 *
 * @param assessment the new assessment
 * @param raised the signals that fire now and did not before
 */
public record MemoryAssessed(MemoryAssessment assessment, Set<MemorySignal> raised) {

    public MemoryAssessed {
        raised = Set.copyOf(raised);
    }
}
