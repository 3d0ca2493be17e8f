package dev.readygate.evidence;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The evidence sources besides the log: the snapshot directory ({@code release.json}, {@code manifest.json}), the
 * preload daemon's health URL and its socket directory (vLLM's sockets, SGLang's sockets and ready files), and the
 * engine container's start id (written by the chart's engine entrypoint when the container starts). Each is optional;
 * an unreadable source says nothing rather than failing.
 */
public final class EvidenceSources {

    /**
     * What the daemon and snapshot sources say now.
     *
     * @param snapshotReleasedAt when {@code release.json} released a restore at or after the start asked about
     * @param daemonHealthy whether the preload daemon's {@code /health} answered 200 (null: not configured)
     * @param daemonSockets how many daemon sockets there are (-1: not configured)
     * @param daemonReadyAt when the daemon's log said it is ready
     * @param manifest the snapshot's manifest, when there is one
     * @param daemonReadyFiles the SGLang daemons' {@code .ready} files in the socket directory (empty: none, or not
     *     configured)
     */
    public record Reading(
            @Nullable Instant snapshotReleasedAt,
            @Nullable Boolean daemonHealthy,
            int daemonSockets,
            @Nullable Instant daemonReadyAt,
            @Nullable SnapshotManifest manifest,
            List<DaemonReadyFile> daemonReadyFiles) {

        public Reading {
            daemonReadyFiles = List.copyOf(daemonReadyFiles);
        }

        /** A reading without SGLang ready files. */
        public Reading(
                @Nullable Instant snapshotReleasedAt,
                @Nullable Boolean daemonHealthy,
                int daemonSockets,
                @Nullable Instant daemonReadyAt,
                @Nullable SnapshotManifest manifest) {
            this(snapshotReleasedAt, daemonHealthy, daemonSockets, daemonReadyAt, manifest, List.of());
        }

        /** A reading without a manifest. */
        public Reading(
                @Nullable Instant snapshotReleasedAt,
                @Nullable Boolean daemonHealthy,
                int daemonSockets,
                @Nullable Instant daemonReadyAt) {
            this(snapshotReleasedAt, daemonHealthy, daemonSockets, daemonReadyAt, null);
        }

        /** Nothing known. */
        public static Reading none() {
            return new Reading(null, null, -1, null, null);
        }
    }

    /**
     * The engine container's start id, as the chart's engine entrypoint writes it when the container starts
     * ({@code {"container_start": "<id>", "started_at": "<instant>"}}).
     *
     * @param id the start id: a new one for every container start
     * @param writtenAt when the file was written
     */
    public record ContainerStart(String id, Instant writtenAt) {}

    /** Where a daemon's pid is looked up. */
    private static final Path PROC = Path.of("/proc");

    private final @Nullable Path snapshotDir;
    private final @Nullable URI daemonHealthUrl;
    private final @Nullable Path daemonSocketDir;
    private final @Nullable DaemonLog daemonLog;
    private final @Nullable Path engineContainerFile;
    private final @Nullable HttpClient http;
    private final JsonMapper json;
    private final Scheduler blocking;
    private final Duration healthTimeout;
    private final Scheduler timer;

    public EvidenceSources(
            @Nullable Path snapshotDir,
            @Nullable URI daemonHealthUrl,
            @Nullable Path daemonSocketDir,
            @Nullable DaemonLog daemonLog,
            @Nullable Path engineContainerFile,
            @Nullable HttpClient http,
            JsonMapper json,
            Scheduler blocking,
            Duration healthTimeout,
            Scheduler timer) {
        if (daemonHealthUrl != null && http == null) {
            throw new IllegalArgumentException("a daemon health URL needs a client to ask it with");
        }
        this.snapshotDir = snapshotDir;
        this.daemonHealthUrl = daemonHealthUrl;
        this.daemonSocketDir = daemonSocketDir;
        this.daemonLog = daemonLog;
        this.engineContainerFile = engineContainerFile;
        this.http = http;
        this.json = json;
        this.blocking = blocking;
        this.healthTimeout = healthTimeout;
        this.timer = timer;
    }

    /** Reads every source; {@code since} is the engine start, so an older {@code release.json} does not count. */
    public Mono<Reading> read(Instant since) {
        Mono<Optional<Boolean>> health = daemonHealthUrl == null
                ? Mono.just(Optional.empty())
                : daemonHealth().map(Optional::of);
        Mono<FileReading> files = Mono.fromCallable(
                        () -> new FileReading(released(since), sockets(), manifest(), readyFiles()))
                .subscribeOn(blocking);
        return Mono.zip(files, health)
                .map(both -> new Reading(
                        both.getT1().released(),
                        both.getT2().orElse(null),
                        both.getT1().sockets(),
                        daemonLog == null ? null : daemonLog.readyAt(),
                        both.getT1().manifest(),
                        both.getT1().readyFiles()));
    }

    private record FileReading(
            @Nullable Instant released,
            int sockets,
            @Nullable SnapshotManifest manifest,
            List<DaemonReadyFile> readyFiles) {}

    /** Whether a snapshot directory is configured. */
    public boolean snapshotConfigured() {
        return snapshotDir != null;
    }

    /** The snapshot's {@code manifest.json}, or null (none configured, none there, or unreadable). Blocking. */
    public @Nullable SnapshotManifest manifest() {
        if (snapshotDir == null) {
            return null;
        }
        Path file = snapshotDir.resolve("manifest.json");
        try {
            if (!Files.isReadable(file)) {
                return null;
            }
            JsonNode doc = json.readTree(Files.readString(file));
            if (!doc.isObject()) {
                return null;
            }
            return new SnapshotManifest(
                    text(doc, "created_at"),
                    text(doc, "model"),
                    text(doc, "model_revision"),
                    doc.path("engine_argv").isArray()
                            ? doc.path("engine_argv")
                                    .valueStream()
                                    .filter(JsonNode::isString)
                                    .map(JsonNode::asString)
                                    .toList()
                            : java.util.List.of(),
                    text(doc, "vllm_version"),
                    text(doc, "gpu_uuid"),
                    text(doc, "gpu_name"),
                    text(doc, "driver_version"),
                    text(doc, "cuda_runtime"),
                    text(doc, "host_id"));
        } catch (IOException | RuntimeException ex) {
            return null;
        }
    }

    private static @Nullable String text(JsonNode doc, String field) {
        JsonNode value = doc.get(field);
        return value == null || value.isNull() || value.isContainer() ? null : value.asString();
    }

    /** The engine container's start id, or null (not configured, not written yet, or unreadable). Blocking. */
    public @Nullable ContainerStart engineContainer() {
        if (engineContainerFile == null) {
            return null;
        }
        try {
            if (!Files.isReadable(engineContainerFile)) {
                return null;
            }
            Instant written = Files.getLastModifiedTime(engineContainerFile).toInstant();
            JsonNode doc = json.readTree(Files.readString(engineContainerFile));
            String id = text(doc, "container_start");
            return id == null || id.isBlank() ? null : new ContainerStart(id.strip(), written);
        } catch (IOException | RuntimeException ex) {
            return null;
        }
    }

    private Mono<Boolean> daemonHealth() {
        URI url = daemonHealthUrl;
        HttpClient client = http;
        if (url == null || client == null) {
            return Mono.empty();
        }
        // The JDK's client, asynchronous: an occasional check needs no share of the web server's event loops.
        HttpRequest request =
                HttpRequest.newBuilder(url).timeout(healthTimeout).GET().build();
        // The client's connect timeout and the request's bound each step; this bounds both, on readygate's timers.
        return Mono.fromFuture(() -> client.sendAsync(request, HttpResponse.BodyHandlers.discarding()))
                .map(response -> response.statusCode() == 200)
                .timeout(healthTimeout.multipliedBy(2), timer)
                .onErrorReturn(false);
    }

    private @Nullable Instant released(Instant since) {
        if (snapshotDir == null) {
            return null;
        }
        Path release = snapshotDir.resolve("release.json");
        try {
            if (!Files.isReadable(release)) {
                return null;
            }
            Instant written = Files.getLastModifiedTime(release).toInstant();
            JsonNode doc = json.readTree(Files.readString(release));
            // Written by the restore of this start: after its process started (a little slack for clock rounding).
            boolean fresh = !written.isBefore(since.minusMillis(100));
            return doc.path("release").asBoolean(false) && fresh ? written : null;
        } catch (IOException | RuntimeException ex) {
            return null;
        }
    }

    /** The SGLang daemons' ready files in the socket directory; none when it is not configured. Blocking. */
    private List<DaemonReadyFile> readyFiles() {
        return daemonSocketDir == null ? List.of() : DaemonReadyFile.in(daemonSocketDir, PROC);
    }

    private int sockets() {
        if (daemonSocketDir == null) {
            return -1;
        }
        int count = 0;
        // vLLM's (vllm_weight_cache_gpu0.sock, ..._<uuid>.sock) and SGLang's (sglang_weight_cache_<uuid>.sock).
        try (DirectoryStream<Path> entries =
                Files.newDirectoryStream(daemonSocketDir, "{vllm,sglang}_weight_cache_*.sock")) {
            for (Path ignored : entries) {
                count++;
            }
        } catch (IOException ex) {
            return 0;
        }
        return count;
    }
}
