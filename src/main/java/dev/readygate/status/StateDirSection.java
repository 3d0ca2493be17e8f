package dev.readygate.status;

import dev.readygate.statedir.StateDir;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/**
 * {@code /status}'s {@code stateDir} section: whether this readygate writes the state directory (or runs read-only
 * beside another), and how each store's writes stand; {@code degraded} names what fails ({@code state_dir_read_only},
 * {@code state_dir_full}, ...). Readiness never depends on it.
 */
@Component
final class StateDirSection {

    private final StateDir stateDir;

    StateDirSection(StateDir stateDir) {
        this.stateDir = stateDir;
    }

    Map<String, Object> of() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("path", stateDir.directory().toString());
        out.put("mode", mode(stateDir.readOnly(), stateDir.holder()));
        Map<String, Object> stores = new LinkedHashMap<>();
        Set<String> degraded = new LinkedHashSet<>();
        stateDir.status().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(entry -> {
            StateDir.StoreStatus store = entry.getValue();
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("file", entry.getKey().file());
            s.put("status", store.problem() == null ? "ok" : "failing");
            if (store.problem() != null) {
                degraded.add(store.problem().value());
                s.put("reason", store.problem().value());
                s.put("since", store.since().toString());
                s.put("detail", store.detail());
            }
            s.put(
                    "lastWrite",
                    store.lastWrite() == null ? null : store.lastWrite().toString());
            stores.put(entry.getKey().value(), s);
        });
        out.put("degraded", List.copyOf(degraded));
        out.put("stores", stores);
        return out;
    }

    /** The directory's mode: {@code writer}, or read-only and who holds the lock, when it is known. */
    static String mode(boolean readOnly, @Nullable String holder) {
        return readOnly
                ? "read_only: another readygate holds the lock" + (holder == null ? "" : " (" + holder + ")")
                : "writer";
    }
}
