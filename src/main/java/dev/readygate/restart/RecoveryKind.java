package dev.readygate.restart;

import java.util.Locale;

/**
 * What an engine start recovered from, compared with the start before it: how much of the machine's state could have
 * survived. Decided by {@link Recovery#decide} from the facts readygate records with every start (the node, its boot
 * id, the pod, the engine's container, the GPU and its driver); the widest change wins, except that a changed driver or
 * GPU is named before a reboot or a new pod (that is what a snapshot restore cannot survive).
 */
public enum RecoveryKind {
    /** The engine process restarted in the same container (a restart loop in the container, or an admin restart). */
    PROCESS_RESTARTED("engine process restarted in the same container"),
    /** The engine's container restarted in the same pod (the kubelet restarted it). */
    CONTAINER_RESTARTED("engine container restarted in the same pod"),
    /** A new pod on the same node (same boot). */
    NEW_POD("new pod on the same node"),
    /** The same node after a reboot: the GPU and page cache state is gone. */
    NODE_REBOOTED("same node, rebooted"),
    /** Another node. */
    NEW_NODE("new node"),
    /** Another GPU (UUID) than the start before. */
    GPU_CHANGED("another GPU"),
    /** Another NVIDIA driver or CUDA version than the start before. */
    DRIVER_CHANGED("driver or CUDA changed"),
    /** No restart: the same engine process woke from vLLM's sleep mode ({@link RestartPath#WAKE}). */
    WOKE("the same engine process woke from sleep"),
    /** Nothing to compare with, or too little known. */
    UNKNOWN("unknown");

    private final String words;

    RecoveryKind(String words) {
        this.words = words;
    }

    /** The label value in metrics, records and {@code /status}: {@code process_restarted}, ... */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The kind in words, for people. */
    public String words() {
        return words;
    }

    /** The kind of a value; one this version does not know reads as unknown. */
    public static RecoveryKind of(String value) {
        for (RecoveryKind kind : values()) {
            if (kind.value().equals(value)) {
                return kind;
            }
        }
        return UNKNOWN;
    }
}
