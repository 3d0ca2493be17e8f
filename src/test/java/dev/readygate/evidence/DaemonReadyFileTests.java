package dev.readygate.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SGLang's weight-cache daemon's {@code .ready} file as {@code WeightCacheDaemon.serve()} writes it
 * (python/sglang/srt/weight_cache/daemon.py @0f5393f4c80b842e7d2ab3d025961944d913d5bd and
 * @366325d6add1167aaf64d650c86980a9c4a56fcd: {@code f.write(f"pid={os.getpid()}\n")}, {@code
 * f.write(f"config={self.config.to_dict()}\n")}, the config a Python dict of {@code CacheConfig}'s fields,
 * python/sglang/srt/weight_cache/protocol.py @02f7ffb4813b00d8659f6830a0171881bdc47440), and whether its process still
 * runs, from a process file system laid out as Linux's {@code /proc}.
 */
class DaemonReadyFileTests {

    /** A TP 2 daemon's rank 0 for Qwen3-8B FP8, as daemon.py writes it (the dict's repr, Python's quoting). */
    static final String READY = "pid=812\n"
            + "config={'model_path': 'Qwen/Qwen3-8B-FP8', 'model_arch': 'Qwen3ForCausalLM', 'tp_size': 2, 'tp_rank': 0,"
            + " 'pp_size': 1, 'pp_rank': 0, 'dp_size': 1, 'ep_size': 1, 'moe_dp_size': 1, 'moe_dp_rank': 0,"
            + " 'moe_ep_rank': 0, 'attn_dp_size': 1, 'enable_dp_lm_head': False, 'attn_cp_size': 1,"
            + " 'moe_dense_tp_size': None, 'moe_a2a_backend': 'none', 'quant_method': 'fp8',"
            + " 'quant_config_hash': '3b1f0c', 'dtype': 'torch.bfloat16', 'revision': '',"
            + " 'device_capability': '9.0', 'torch_version': '2.9.1+cu129'}\n";

    private static final String NAME = "sglang_weight_cache_GPU-4f5b61fa-5b41-2ff4-94cf-9cd10db0a1da";

    @TempDir
    Path dir;

    @TempDir
    Path proc;

    @Test
    void aDaemonsReadyFileSaysWhoServesWhat() throws Exception {
        Path ready = Files.writeString(dir.resolve(NAME + ".ready"), READY);
        Files.setLastModifiedTime(ready, FileTime.from(Instant.parse("2026-10-05T15:09:58Z")));
        Files.createFile(dir.resolve(NAME + ".sock"));
        process(812, "812 (python3) S 1 812 812 0 -1", "python3", "-m", "sglang.srt.weight_cache.daemon");

        List<DaemonReadyFile> files = DaemonReadyFile.in(dir, proc);

        assertThat(files)
                .containsExactly(new DaemonReadyFile(
                        NAME + ".ready",
                        Instant.parse("2026-10-05T15:09:58Z"),
                        812,
                        "Qwen/Qwen3-8B-FP8",
                        null,
                        0,
                        2,
                        true,
                        true));
        assertThat(files.get(0).describe())
                .isEqualTo(
                        "SGLang daemon ready file " + NAME + ".ready (written 2026-10-05T15:09:58Z): pid 812 running,"
                                + " model Qwen/Qwen3-8B-FP8, tp rank 0 of 2, socket present");
    }

    @Test
    void aFileLeftBehindByAKilledDaemonIsToldApartFromOneReadygateCannotJudge() throws Exception {
        Files.writeString(dir.resolve(NAME + ".ready"), READY);
        // No process 812 here: another PID namespace, or gone; readygate cannot tell which.
        assertThat(DaemonReadyFile.in(dir, proc).get(0).running()).isNull();
        assertThat(DaemonReadyFile.in(dir, proc).get(0).describe())
                .contains("pid 812 (its process is not visible from readygate's container)")
                .endsWith("no socket beside it");

        // A zombie holds no GPU memory and serves nobody.
        process(812, "812 (python3 -m sglang) Z 1 812 812 0 -1", "");
        assertThat(DaemonReadyFile.in(dir, proc).get(0).running()).isFalse();

        // The pid now belongs to another program: the daemon is gone.
        process(812, "812 (bash) S 1 812 812 0 -1", "bash", "-c", "sleep 100");
        assertThat(DaemonReadyFile.in(dir, proc).get(0).running()).isFalse();
        assertThat(DaemonReadyFile.in(dir, proc).get(0).describe())
                .contains("pid 812 not running (the file was left behind: a killed daemon serves nobody)");
    }

    @Test
    void otherReadyFilesAndHostileOnesAreSkippedOrBounded() throws Exception {
        // Another program's marker in the same directory (SGLang's default is /tmp): not a daemon's.
        Files.writeString(dir.resolve("build.ready"), "ready\n");
        // A revision and a path with quotes and escapes, as Python's repr writes them.
        Files.writeString(
                dir.resolve(NAME + ".ready"),
                "pid=77\nconfig={'model_path': \"/models/it's-mine\", 'revision': 'v2\\\\x', 'tp_rank': 0,"
                        + " 'tp_size': 1}\n");
        // A huge file: read no further than its first 64 KiB, which hold no daemon's lines.
        Files.write(dir.resolve("huge.ready"), "x".repeat(200_000).getBytes(StandardCharsets.UTF_8));
        // A pid too long to be one, an empty config: kept, saying what it lacks.
        Files.writeString(dir.resolve("odd.ready"), "pid=99999999999\nconfig={}\n");

        List<DaemonReadyFile> files = DaemonReadyFile.in(dir, proc);

        assertThat(files).extracting(DaemonReadyFile::file).containsExactly("odd.ready", NAME + ".ready");
        DaemonReadyFile mine = files.get(1);
        assertThat(mine.model()).isEqualTo("/models/it's-mine");
        assertThat(mine.revision()).isEqualTo("v2\\\\x");
        assertThat(mine.pid()).isEqualTo(77);
        DaemonReadyFile odd = files.get(0);
        assertThat(odd.pid()).isNull();
        assertThat(odd.model()).isNull();
        assertThat(odd.describe()).contains("no pid");
    }

    @Test
    void aPipeOrADeviceIsNeverReadAndAFloodOfFilesIsBounded() throws Exception {
        // A named pipe would block a read for ever; a link to a device would never end.
        new ProcessBuilder("mkfifo", dir.resolve("pipe.ready").toString())
                .start()
                .waitFor();
        Files.createSymbolicLink(dir.resolve("zero.ready"), Path.of("/dev/zero"));
        for (int i = 0; i < 200; i++) {
            Files.writeString(dir.resolve("d" + i + ".ready"), "pid=" + (1000 + i) + "\n");
        }

        List<DaemonReadyFile> files = DaemonReadyFile.in(dir, proc);

        assertThat(files).hasSizeLessThanOrEqualTo(DaemonReadyFile.MAX_FILES);
        assertThat(files).extracting(DaemonReadyFile::file).doesNotContain("pipe.ready", "zero.ready");
    }

    @Test
    void noDirectoryIsNoFiles() {
        assertThat(DaemonReadyFile.in(dir.resolve("absent"), proc)).isEmpty();
    }

    private void process(int pid, String stat, String... command) throws Exception {
        Path entry = Files.createDirectories(proc.resolve(Integer.toString(pid)));
        Files.writeString(entry.resolve("stat"), stat + "\n");
        Files.writeString(entry.resolve("cmdline"), String.join("\0", command) + "\0");
    }
}
