package dev.readygate.simulator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The snapshot directory as {@code vllm snapshot create} leaves it ({@code manifest.json}, {@code ready.json},
 * {@code images/}) and {@code vllm snapshot restore} changes it ({@code release.json}, {@code restored.pid},
 * {@code restore.log}, {@code child.log}). The manifest's oracle is what the simulated model answers to the
 * snapshot canary, so a restore can be verified the way vLLM's controller does.
 */
final class SnapshotArtifacts {

    /** The oracle request vLLM's snapshot controller replays after a restore. */
    static final String ORACLE_PROMPT = "The capital of France is";

    /**
     * The manifest fields a restore uses. {@code checkpoint} is the simulator's own field ({@code
     * simulator_checkpoint}): the weights captured in the image.
     */
    record Manifest(
            String checkpoint,
            String servedModelName,
            List<Integer> oracleTokenIds,
            String oracleText,
            double oracleLogprob,
            int pid,
            String vllmVersion,
            String gpuUuid,
            String driverVersion) {}

    private final Path dir;
    private final JsonMapper json;
    private final Clock clock;
    private volatile @Nullable Manifest manifest;

    SnapshotArtifacts(Path dir, JsonMapper json, Clock clock) {
        this.dir = dir;
        this.json = json;
        this.clock = clock;
    }

    Path dir() {
        return dir;
    }

    @Nullable
    Manifest manifest() {
        return manifest;
    }

    /**
     * Writes the artifacts of {@code vllm snapshot create} for the engine as configured, answering the oracle with
     * {@code model}. Blocking file I/O: call it off event loops.
     */
    Manifest create(SimulatorProperties properties, SimulatedModel model, List<String> engineArgv, int pid) {
        SimulatorProperties.Model m = properties.model();
        SimulatedModel.Generation generation = model.start(
                m.checkpoint(),
                model.tokenizer().encode(ORACLE_PROMPT, false),
                new SimulatedModel.Sampling(1, 1, false, 0, 0L, 0));
        SimulatedModel.Token token = generation.next();
        Manifest created = new Manifest(
                m.checkpoint(),
                m.servedModelName(),
                List.of(token.id()),
                token.text(),
                token.logprob(),
                pid,
                properties.vllmVersion(),
                m.gpuUuid(),
                m.driverVersion());
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("schema_version", 1);
        doc.put("boundary", "post-engine-init-reloadable-state-released");
        doc.put("created_at", clock.instant().toString());
        doc.put("artifact_bytes", 3_565_976_397L);
        doc.put("complete", true);
        doc.put("model", m.root());
        doc.put("served_model_name", m.servedModelName());
        doc.put("model_revision", m.revision());
        doc.put("tokenizer_revision", m.revision());
        doc.put("engine_argv", engineArgv);
        doc.put("process_tree", List.of(pid, pid + 1));
        doc.put("cuda_holders", List.of(pid + 1));
        doc.put("oracle_token_ids", created.oracleTokenIds());
        doc.put("oracle_text", created.oracleText());
        doc.put("oracle_sampled_token_logprob", created.oracleLogprob());
        doc.put("vllm_version", properties.vllmVersion());
        doc.put("python_version", "3.12.3");
        doc.put("torch_version", "2.9.0+cu129");
        doc.put("cuda_runtime", "12.9");
        doc.put("driver_version", m.driverVersion());
        doc.put("criu_version", "4.1");
        doc.put("cuda_checkpoint_sha256", "9f2c4c0b8d5e3a1f7b6e0d4c2a8f1e3b5d7c9a0b2e4f6a8c0d2e4f6a8b0c2d4e");
        doc.put("kernel_release", "6.8.0-60-generic");
        doc.put("host_id", "3f1c2b9a8d7e4f60a1b2c3d4e5f60718");
        doc.put("gpu_name", m.gpuName());
        doc.put("gpu_uuid", m.gpuUuid());
        doc.put("environment", Map.of("VLLM_NO_USAGE_STATS", "1"));
        doc.put("source_revision", "simulated");
        doc.put("binary_revision", "simulated");
        doc.put("socket_inventory", List.of());
        doc.put("simulator_checkpoint", m.checkpoint());
        try {
            Files.createDirectories(dir);
            setPermissions(dir, "rwx------");
            Files.createDirectories(dir.resolve("images"));
            writeJson("ready.json", Map.of("pid", pid, "ready", true));
            // Published atomically, as vLLM does: write beside it, then rename.
            Path temporary = dir.resolve(".manifest.json.tmp");
            Files.writeString(temporary, json.writerWithDefaultPrettyPrinter().writeValueAsString(doc));
            setPermissions(temporary, "rw-------");
            moveAtomically(temporary, dir.resolve("manifest.json"));
            Files.deleteIfExists(dir.resolve("release.json"));
            Files.deleteIfExists(dir.resolve("restored.pid"));
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot write snapshot artifacts in " + dir, ex);
        }
        manifest = created;
        return created;
    }

    /**
     * Reads {@code manifest.json} as {@code vllm snapshot restore} does, from disk, so an edited or deleted manifest
     * is what the next restore sees. Blocking file I/O: call it off event loops.
     *
     * @throws IllegalStateException naming vLLM's error when the manifest is missing or unreadable
     */
    Manifest read() {
        Path file = dir.resolve("manifest.json");
        if (!Files.exists(file)) {
            throw new IllegalStateException("SnapshotRestoreError: no manifest.json in " + dir);
        }
        try {
            JsonNode doc = json.readTree(Files.readString(file));
            List<Integer> oracle = doc.path("oracle_token_ids")
                    .valueStream()
                    .map(JsonNode::intValue)
                    .toList();
            JsonNode tree = doc.path("process_tree");
            return new Manifest(
                    doc.path("simulator_checkpoint").asString(),
                    doc.path("served_model_name").asString(),
                    oracle,
                    doc.path("oracle_text").asString(),
                    doc.path("oracle_sampled_token_logprob").asDouble(),
                    tree.isArray() && !tree.isEmpty() ? tree.get(0).asInt() : 0,
                    doc.path("vllm_version").asString(),
                    doc.path("gpu_uuid").asString(),
                    doc.path("driver_version").asString());
        } catch (IOException | RuntimeException ex) {
            throw new IllegalStateException("SnapshotRestoreError: cannot read " + file + ": " + ex.getMessage(), ex);
        }
    }

    /** What {@code vllm snapshot restore} writes when it releases the restored engine onto host:port. */
    void markRestored(String host, int port, int pid, Instant at) {
        try {
            writeJson("release.json", Map.of("host", host, "port", port, "release", true));
            Files.writeString(dir.resolve("restored.pid"), pid + "\n");
            Files.writeString(
                    dir.resolve("restore.log"),
                    at + " restore: released " + host + ":" + port + ", listener up, oracle matched\n");
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot write restore artifacts in " + dir, ex);
        }
    }

    /** Appends a line to {@code child.log}, where the newer controller sends a restored engine's output. */
    void appendChildLog(String line) {
        try {
            Files.writeString(
                    dir.resolve("child.log"),
                    line + "\n",
                    StandardCharsets.UTF_8,
                    java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.APPEND);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private void writeJson(String name, Object value) throws IOException {
        Files.writeString(dir.resolve(name), json.writeValueAsString(value));
    }

    private static void moveAtomically(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException ex) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private static void setPermissions(Path path, String permissions) throws IOException {
        try {
            Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(permissions));
        } catch (UnsupportedOperationException ex) {
            // Not a POSIX file system (the simulator on another OS): permissions do not matter there.
        }
    }
}
