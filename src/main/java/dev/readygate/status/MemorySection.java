package dev.readygate.status;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.memory.MemoryAssessment;
import dev.readygate.memory.MemorySignal;
import dev.readygate.memory.MemoryWatch;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.stereotype.Component;

/**
 * {@code /status}'s {@code memory} section: the memory signals, what each shows now and whether it fires; a signal
 * with nothing to show says what it waits for.
 */
@Component
final class MemorySection {

    private final MemoryWatch memoryWatch;
    private final int leakCycles;

    MemorySection(MemoryWatch memoryWatch, ReadygateProperties properties) {
        this.memoryWatch = memoryWatch;
        this.leakCycles = properties.memory().leakCycles();
    }

    Map<String, Object> of() {
        return of(memoryWatch.assessment(), leakCycles);
    }

    /** The section for an assessment, with {@code readygate.memory.leak-cycles} at {@code leakCycles}. */
    static Map<String, Object> of(MemoryAssessment assessment, int leakCycles) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("signals", assessment.active().stream().map(MemorySignal::value).toList());
        MemoryAssessment.Drift drift = assessment.drift();
        out.put(
                MemorySignal.LEAK_ACROSS_RESTARTS.value(),
                drift == null
                        ? "fewer than " + leakCycles + " measured ready cycles with the same configuration and path"
                        : drift);
        MemoryAssessment.HeldAfterStop held = assessment.heldAfterStop();
        out.put(
                MemorySignal.HELD_AFTER_STOP.value(),
                held == null ? "no stop measured yet, or the latest stop was a sleep (its engine lives on)" : held);
        MemoryAssessment.StaleCache stale = assessment.staleCache();
        out.put(
                MemorySignal.STALE_CACHE.value(),
                stale == null
                        ? "nothing shows the preload daemon holds another checkpoint than the one served (no preload"
                                + " hit or fingerprint mismatch since readygate started or the daemon last changed)"
                        : stale);
        MemoryAssessment.KvCache kv = assessment.kvCache();
        out.put(
                MemorySignal.KV_CACHE_SHRINKING.value(),
                kv == null ? "fewer than 2 ready cycles with the same configuration and a known KV cache size" : kv);
        return out;
    }
}
