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
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The evidence sources besides the log: the snapshot directory ({@code release.json}), the preload daemon's health URL
 * and its socket directory. Each is optional; an unreadable source says nothing rather than failing.
 */
public final class EvidenceSources {

    /** What the daemon and snapshot sources say now. */
    public record Reading(
            @Nullable Instant snapshotReleasedAt,
            @Nullable Boolean daemonHealthy,
            int daemonSockets,
            @Nullable Instant daemonReadyAt) {

        /** Nothing known. */
        public static Reading none() {
            return new Reading(null, null, -1, null);
        }
    }

    private final @Nullable Path snapshotDir;
    private final @Nullable URI daemonHealthUrl;
    private final @Nullable Path daemonSocketDir;
    private final @Nullable DaemonLog daemonLog;
    private final HttpClient http;
    private final JsonMapper json;
    private final Scheduler blocking;
    private final Duration healthTimeout;
    private final Scheduler timer;

    public EvidenceSources(
            @Nullable Path snapshotDir,
            @Nullable URI daemonHealthUrl,
            @Nullable Path daemonSocketDir,
            @Nullable DaemonLog daemonLog,
            HttpClient http,
            JsonMapper json,
            Scheduler blocking,
            Duration healthTimeout,
            Scheduler timer) {
        this.snapshotDir = snapshotDir;
        this.daemonHealthUrl = daemonHealthUrl;
        this.daemonSocketDir = daemonSocketDir;
        this.daemonLog = daemonLog;
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
        Mono<FileReading> files = Mono.fromCallable(() -> new FileReading(released(since), sockets()))
                .subscribeOn(blocking);
        return Mono.zip(files, health)
                .map(both -> new Reading(
                        both.getT1().released(),
                        both.getT2().orElse(null),
                        both.getT1().sockets(),
                        daemonLog == null ? null : daemonLog.readyAt()));
    }

    private record FileReading(@Nullable Instant released, int sockets) {}

    private Mono<Boolean> daemonHealth() {
        URI url = daemonHealthUrl;
        if (url == null) {
            return Mono.empty();
        }
        // The JDK's client, asynchronous: an occasional check needs no share of the web server's event loops.
        HttpRequest request =
                HttpRequest.newBuilder(url).timeout(healthTimeout).GET().build();
        // The client's connect timeout and the request's bound each step; this bounds both, on readygate's timers.
        return Mono.fromFuture(() -> http.sendAsync(request, HttpResponse.BodyHandlers.discarding()))
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

    private int sockets() {
        if (daemonSocketDir == null) {
            return -1;
        }
        int count = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(daemonSocketDir, "vllm_weight_cache_*.sock")) {
            for (Path ignored : entries) {
                count++;
            }
        } catch (IOException ex) {
            return 0;
        }
        return count;
    }
}
