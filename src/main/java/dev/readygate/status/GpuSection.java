package dev.readygate.status;

import dev.readygate.gpu.GpuMemory;
import dev.readygate.gpu.GpuMemoryMonitor;
import dev.readygate.gpu.GpuMemoryView;
import dev.readygate.gpu.MemoryMoment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/** {@code /status}'s {@code gpu} section: who holds how much GPU memory, from the last reading, or why it failed. */
@Component
final class GpuSection {

    private final GpuMemoryMonitor gpuMemory;

    GpuSection(GpuMemoryMonitor gpuMemory) {
        this.gpuMemory = gpuMemory;
    }

    Map<String, Object> of() {
        return of(gpuMemory.last());
    }

    /** The section for a reading ({@code null}: none yet). */
    static Map<String, Object> of(@Nullable GpuMemoryView view) {
        Map<String, Object> out = new LinkedHashMap<>();
        if (view == null) {
            out.put("state", "not read yet");
            return out;
        }
        out.put("at", view.at().toString());
        Map<String, Object> failures = new LinkedHashMap<>();
        view.sourceFailures()
                .forEach((source, failure) ->
                        failures.put(source, Map.of("reason", failure.reason().value(), "detail", failure.detail())));
        if (view.failure() != null) {
            out.put("failure", view.failure().value());
            out.put("detail", view.failureDetail());
            out.put("sourceFailures", failures);
            return out;
        }
        out.put("source", view.source());
        out.put("sourceFailures", failures);
        List<Map<String, Object>> gpus = new ArrayList<>();
        for (GpuMemory memory : view.gpus()) {
            Map<String, Object> gpu = new LinkedHashMap<>();
            gpu.put("uuid", memory.uuid());
            gpu.put("name", memory.name());
            gpu.put("totalBytes", memory.totalBytes());
            gpu.put("usedBytes", memory.usedBytes());
            gpu.put("freeBytes", memory.freeBytes());
            Map<String, Long> owners = new LinkedHashMap<>();
            view.byOwner()
                    .getOrDefault(memory.uuid(), Map.of())
                    .forEach((owner, bytes) -> owners.put(owner.value(), bytes));
            gpu.put("byOwnerBytes", owners);
            gpus.add(gpu);
        }
        out.put("gpus", gpus);
        out.put(
                "processes",
                view.processes().stream()
                        .map(process -> Map.of(
                                "pid",
                                process.pid(),
                                "owner",
                                process.owner().value(),
                                "gpu",
                                process.gpuUuid(),
                                "MiB",
                                MemoryMoment.mib(process.usedBytes())))
                        .toList());
        return out;
    }
}
