package dev.readygate.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.ExternalTool;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine container's entrypoint ({@code charts/readygate/files/engine-entrypoint.sh}) in each mode, with a fake
 * {@code vllm} on the PATH: vLLM's output reaches the shared log, the preload daemon serves before the engine starts
 * and the engine is started again until the daemon goes, a restored snapshot's files are copied where readygate can
 * read them, and SIGTERM reaches vLLM.
 */
@Tag("python3")
class EngineEntrypointTests {

    static final Path ENTRYPOINT =
            Chart.DIRECTORY.resolve("files/engine-entrypoint.sh").toAbsolutePath();

    /** Serves, preloads and restores the way the tests need, recording what it was asked. */
    static final String FAKE_VLLM = """
            #!/usr/bin/env bash
            echo "fake vllm $*"
            case $1 in
              serve)
                n=$(( $(cat "$FAKE_DIR/serves" 2>/dev/null || echo 0) + 1 ))
                echo "$n" > "$FAKE_DIR/serves"
                echo "INFO Loading weights took 1.00 seconds (start $n)"
                if [[ -n ${FAKE_BLOCK:-} ]]; then
                  trap 'echo "fake vllm: SIGTERM, draining"; exit 0' TERM
                  echo "Application startup complete."
                  while :; do sleep 0.05; done
                fi
                if [[ -f $FAKE_DIR/daemon.pid && $n -ge 2 ]]; then
                  daemon=$(cat "$FAKE_DIR/daemon.pid")
                  kill "$daemon"
                  while [[ -e /proc/$daemon ]] && ! grep -q '^State:.*Z' "/proc/$daemon/status" 2>/dev/null; do sleep 0.02; done
                fi
                for (( i = 0; i < ${FAKE_LINES:-0}; i++ )); do echo "line $i"; done
                echo "ERROR fake vllm: the last line, why it stopped"
                exit 3 ;;
              preload)
                echo "===== Weight cache daemon READY: all 1 ranks serving in 0.10s ====="
                echo $$ > "$FAKE_DIR/daemon.pid"
                mkdir -p "$FAKE_DIR/www" && touch "$FAKE_DIR/www/health"
                exec "$FAKE_PYTHON" -m http.server "$FAKE_HEALTH_PORT" --bind 127.0.0.1 --directory "$FAKE_DIR/www" ;;
              snapshot)
                echo '{"host":"0.0.0.0","port":8000,"release":true}' > "$3/release.json"
                chmod 0600 "$3/release.json"
                sleep 0.3 &
                echo $! > "$3/restored.pid"
                echo "snapshot restored" ;;
            esac
            """;

    @TempDir
    Path dir;

    Path bin;
    Path logs;

    @BeforeEach
    void fakeVllm() throws IOException {
        bin = Files.createDirectories(dir.resolve("bin"));
        logs = Files.createDirectories(dir.resolve("logs"));
        Path vllm = Files.writeString(bin.resolve("vllm"), FAKE_VLLM);
        Files.setPosixFilePermissions(vllm, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    Process start(String mode, Map<String, String> env, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of("bash", ENTRYPOINT.toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("stdout").toFile());
        builder.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        builder.environment().put("FAKE_DIR", dir.toString());
        builder.environment().put("FAKE_PYTHON", ExternalTool.PYTHON3.path().toString());
        builder.environment().put("READYGATE_MODE", mode);
        builder.environment()
                .put("READYGATE_ENGINE_LOG", logs.resolve("engine.log").toString());
        builder.environment().putAll(env);
        return builder.start();
    }

    int exitOf(Process process) throws InterruptedException {
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("the entrypoint did not end within 30 s");
        }
        return process.exitValue();
    }

    String read(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file) : "";
    }

    @Test
    void plainRunsVllmServeWithItsArgumentsCopiesItsOutputToTheLogAndExitsWithItsStatus() throws Exception {
        Process entrypoint = start("plain", Map.of(), "Qwen/Qwen3-0.6B", "--port", "8000");
        assertThat(exitOf(entrypoint)).isEqualTo(3);
        assertThat(read(logs.resolve("engine.log")))
                .contains("fake vllm serve Qwen/Qwen3-0.6B --port 8000")
                .contains("Loading weights took 1.00 seconds");
        // Still the container's output too (kubectl logs).
        assertThat(read(dir.resolve("stdout"))).contains("Loading weights took 1.00 seconds");
    }

    @Test
    void theLastLinesVllmWroteAreInTheLogWhenTheContainerEnds() throws Exception {
        // The copy to the log is a process of its own: the entrypoint used to end before it had read vLLM's last
        // lines (7 times in 10 with 3,000 lines before them), often the very lines that say why vLLM stopped.
        for (int run = 0; run < 3; run++) {
            Files.deleteIfExists(logs.resolve("engine.log"));
            Process entrypoint = start("plain", Map.of("FAKE_LINES", "3000"), "Qwen/Qwen3-0.6B");
            assertThat(exitOf(entrypoint)).isEqualTo(3);
            assertThat(read(logs.resolve("engine.log"))).endsWith("ERROR fake vllm: the last line, why it stopped\n");
        }
    }

    @Test
    void everyContainerStartWritesANewStartIdBeforeVllmStarts() throws Exception {
        Path file = logs.resolve("engine-container.json");
        Map<String, String> env = Map.of("READYGATE_CONTAINER_FILE", file.toString());

        assertThat(exitOf(start("plain", env, "Qwen/Qwen3-0.6B"))).isEqualTo(3);
        String first = read(file);
        assertThat(exitOf(start("plain", env, "Qwen/Qwen3-0.6B"))).isEqualTo(3);
        String second = read(file);

        String shape =
                "\\{\"container_start\": \"[0-9a-f-]{36}\", \"started_at\": \"\\d{4}-\\d\\d-\\d\\dT[0-9:]{8}Z\"}\n";
        assertThat(first).matches(shape);
        assertThat(second).matches(shape);
        assertThat(second.substring(0, 56)).isNotEqualTo(first.substring(0, 56));
        assertThat(logs.resolve("engine-container.json.tmp")).doesNotExist();
    }

    @Test
    void plainWhenTerminatedPassesSigtermToVllmAndEndsWhenItHasDrained() throws Exception {
        Process entrypoint = start("plain", Map.of("FAKE_BLOCK", "1"), "Qwen/Qwen3-0.6B");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> read(logs.resolve("engine.log")).contains("Application startup complete."));
        entrypoint.destroy();
        assertThat(exitOf(entrypoint)).isZero();
        assertThat(read(logs.resolve("engine.log"))).contains("fake vllm: SIGTERM, draining");
    }

    @Test
    void preloadStartsTheDaemonThenTheEngineAgainAndAgainUntilTheDaemonIsGone() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Process entrypoint = start(
                "preload",
                Map.of(
                        "FAKE_HEALTH_PORT", String.valueOf(port),
                        "READYGATE_DAEMON_HEALTH_PORT", String.valueOf(port),
                        "READYGATE_DAEMON_LOG", logs.resolve("daemon.log").toString(),
                        "READYGATE_SOCKET_DIR", dir.resolve("sockets").toString(),
                        "READYGATE_RESTART_DELAY_SECONDS", "0"),
                "Qwen/Qwen3-0.6B",
                "--load-format",
                "ipc_cache",
                "::preload::",
                "--dtype",
                "bfloat16");
        // The second engine start takes the daemon down: the container ends so that both start again.
        assertThat(exitOf(entrypoint)).isEqualTo(1);
        assertThat(read(logs.resolve("daemon.log")))
                .contains("fake vllm preload Qwen/Qwen3-0.6B --dtype bfloat16 --weight-cache-socket-dir "
                        + dir.resolve("sockets") + " --weight-cache-health-port " + port)
                .contains("Weight cache daemon READY");
        assertThat(read(logs.resolve("engine.log")))
                .contains("fake vllm serve Qwen/Qwen3-0.6B --load-format ipc_cache\n")
                .contains("(start 1)", "(start 2)")
                .doesNotContain("(start 3)");
        assertThat(read(dir.resolve("stdout")))
                .contains("the engine exited with status 3; starting it again")
                .contains("the preload daemon is gone");
    }

    @Test
    void snapshotRestoresCopiesTheSnapshotFilesForReadygateAndLivesAsLongAsTheRestoredServer() throws Exception {
        Path snapshot = Files.createDirectories(dir.resolve("snapshot"));
        Path view = Files.createDirectories(dir.resolve("snapshot-view"));
        Files.writeString(snapshot.resolve("manifest.json"), "{\"oracle_text\":\" Paris\"}");
        Files.setPosixFilePermissions(snapshot.resolve("manifest.json"), PosixFilePermissions.fromString("rw-------"));
        Process entrypoint = start(
                "snapshot",
                Map.of(
                        "READYGATE_ENGINE_PORT", "8000",
                        "READYGATE_SNAPSHOT_DIR", snapshot.toString(),
                        "READYGATE_SNAPSHOT_VIEW", view.toString()),
                "Qwen/Qwen3-0.6B");
        assertThat(exitOf(entrypoint)).isEqualTo(1);
        assertThat(read(logs.resolve("engine.log")))
                .contains("fake vllm snapshot restore " + snapshot + " --host 0.0.0.0 --port 8000")
                .contains("snapshot restored");
        assertThat(read(dir.resolve("stdout")))
                .contains("restored server runs as pid")
                .contains("the restored server exited");
        assertThat(read(view.resolve("manifest.json"))).isEqualTo("{\"oracle_text\":\" Paris\"}");
        assertThat(read(view.resolve("release.json"))).contains("\"release\":true");
        assertThat(Files.getPosixFilePermissions(view.resolve("release.json")))
                .isEqualTo(PosixFilePermissions.fromString("rw-r--r--"));
        assertThat(Files.getLastModifiedTime(view.resolve("release.json")))
                .isEqualTo(Files.getLastModifiedTime(snapshot.resolve("release.json")));
    }
}
