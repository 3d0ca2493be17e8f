package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's test command and the scripts it runs, driven through their failures with stand-ins for Docker, the
 * JDK's tools, debootstrap and the build tools (issue 25): every step either succeeds or says what failed and what to
 * do, and the real-engine suite's llama.cpp source comes from its public repository at the pinned commit when no
 * tarball is given. Needs only bash and git, which a clone of this project has.
 */
class TestCommandScriptsTests {

    @TempDir
    Path dir;

    private Path project;
    private Path fakes;
    private Path jdk;

    @BeforeEach
    void copyTheScriptsAndMakeStandIns() throws IOException {
        project = Files.createDirectories(dir.resolve("project"));
        Files.createDirectories(project.resolve(".ci"));
        for (String file : List.of("run-tests", "Dockerfile")) {
            Files.copy(Path.of(file), project.resolve(file));
        }
        try (Stream<Path> scripts = Files.list(Path.of(".ci"))) {
            for (Path script : scripts.toList()) {
                Files.copy(script, project.resolve(".ci").resolve(script.getFileName()));
            }
        }
        fakes = Files.createDirectories(dir.resolve("bin"));
        // Docker's client: an engine answers, the base image is not there and no registry gives it; `docker run` of
        // the made image answers java -version at length (far more than a pipe's buffer), as a real JVM's banner
        // may with its warnings.
        program(fakes.resolve("docker"), """
                case "$1" in
                  info|load) exit 0 ;;
                  image|pull) exit 1 ;;
                  import) cat >/dev/null; exit "${FAKE_IMPORT_STATUS:-0}" ;;
                  run) echo 'openjdk version "25.0.3" 2026-04-21'
                       for i in $(seq 1 20000); do echo "a warning line of the JVM, number $i"; done ;;
                  save) shift; [ "$1" = -o ] && echo image > "$2" ;;
                esac
                """);
        program(fakes.resolve("debootstrap"), "mkdir -p \"$4/usr\"");
        for (String tool : List.of("chromium", "promtool", "prometheus", "python3", "llama-server")) {
            program(fakes.resolve("fake-" + tool), "echo " + tool);
        }
        jdk = Files.createDirectories(dir.resolve("jdk"));
        program(jdk.resolve("bin/java"), "echo 'openjdk version \"25.0.3\" 2026-04-21' >&2");
        program(jdk.resolve("bin/javac"), "echo 'javac 25.0.3'");
        program(
                jdk.resolve("bin/jlink"),
                "while [ $# -gt 0 ]; do [ \"$1\" = --output ] && mkdir -p \"$2\"; shift; done");
        Files.writeString(
                jdk.resolve("release"), "IMPLEMENTOR_VERSION=\"Temurin-25.0.3\"\nJAVA_RUNTIME_VERSION=\"25.0.3\"\n");
    }

    /** Before: the step's `java -version | head -1` ended the script with SIGPIPE (exit 141), saying nothing. */
    @Test
    void theBaseImageIsMadeAndKeptWhenItsJavaAnswersAtLength() throws Exception {
        Result result = run(List.of(".ci/base-images.sh"), Map.of());

        assertThat(result.status()).as(result.output()).isZero();
        assertThat(result.output()).contains("base image eclipse-temurin:25-jre: openjdk version \"25.0.3\"");
        assertThat(result.output()).contains("made and saved to");
        try (Stream<Path> kept = Files.list(dir.resolve("cache"))) {
            assertThat(kept.map(Path::getFileName).map(Path::toString))
                    .singleElement()
                    .satisfies(name -> assertThat(name)
                            .startsWith("eclipse-temurin_25-jre-")
                            .endsWith(".tar"));
        }
    }

    @Test
    void aFailingStepOfTheTestCommandSaysWhatFailedAndWhatToDo() throws Exception {
        Result result = run(List.of("./run-tests", "--setup-only"), Map.of("FAKE_IMPORT_STATUS", "3"));

        assertThat(result.status()).as(result.output()).isNotZero();
        assertThat(result.output())
                .contains("base image: failed (exit 3) at .ci/base-images.sh line")
                .contains("docker import")
                .contains("run-tests: FAILED (exit 3) while making sure the base image eclipse-temurin:25-jre is there")
                .contains("run ./run-tests again");
    }

    @Test
    void theTestCommandStopsBeforeMavenWhenAskedToSetUpOnly() throws Exception {
        Result result = run(List.of("./run-tests", "--setup-only"), Map.of());

        assertThat(result.status()).as(result.output()).isZero();
        assertThat(result.output()).contains("not running Maven (--setup-only)").doesNotContain("FAILED");
    }

    @Test
    void withoutATarballLlamaCppIsFetchedAtThePinnedCommitAndBuilt() throws Exception {
        String commit = repositoryWithABuild("llama.cpp");
        stubBuildTools();

        Result result = run(
                List.of(".ci/llama-server.sh"),
                Map.of("LLAMA_CPP_COMMIT", commit, "LLAMA_CPP_REPOSITORY", "file://" + dir.resolve("llama.cpp")));

        assertThat(result.status()).as(result.output()).isZero();
        Path binary = dir.resolve("home/.cache/readygate/llama-server/commit-" + commit + "/bin/llama-server");
        assertThat(result.stdout().strip()).isEqualTo(binary.toString());
        assertThat(result.output()).contains("building llama.cpp " + commit + " (verified by git)");
        assertThat(Files.exists(binary.resolveSibling("../complete"))).isTrue();
    }

    @Test
    void withoutATarballOrTheCommitItSaysWhatToPutWhere() throws Exception {
        repositoryWithABuild("llama.cpp");
        stubBuildTools();
        String absent = "0123456789abcdef0123456789abcdef01234567";

        Result result = run(
                List.of(".ci/llama-server.sh"),
                Map.of("LLAMA_CPP_COMMIT", absent, "LLAMA_CPP_REPOSITORY", "file://" + dir.resolve("llama.cpp")));

        assertThat(result.status()).isEqualTo(1);
        assertThat(result.output())
                .contains("could not fetch llama.cpp's commit " + absent)
                .contains("/archive/" + absent + ".tar.gz")
                .contains("put it at " + dir.resolve("home/.cache/readygate/llama.cpp-01234567.tar.gz"))
                .contains("READYGATE_LLAMA_SERVER");
    }

    /** A git repository whose one commit builds a stand-in llama-server with the stand-in cmake; its commit id. */
    private String repositoryWithABuild(String name) throws Exception {
        Path repository = Files.createDirectories(dir.resolve(name));
        Files.writeString(repository.resolve("CMakeLists.txt"), "project(llama.cpp)\n");
        git(repository, "init", "-q");
        git(repository, "add", "CMakeLists.txt");
        git(repository, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "pinned");
        return git(repository, "rev-parse", "HEAD").strip();
    }

    /** cmake, g++ and make that build nothing but a llama-server that answers --version. */
    private void stubBuildTools() throws IOException {
        program(fakes.resolve("cmake"), """
                if [ "$1" = --build ]; then
                  mkdir -p "$2/bin" && printf '#!/bin/sh\\necho version: 1\\n' > "$2/bin/llama-server"
                  chmod +x "$2/bin/llama-server"
                fi
                """);
        program(fakes.resolve("g++"), "exit 0");
        program(fakes.resolve("make"), "exit 0");
    }

    private String git(Path directory, String... arguments) throws Exception {
        List<String> command = new ArrayList<>(List.of("git", "-C", directory.toString()));
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        return output;
    }

    private Result run(List<String> command, Map<String, String> extra) throws Exception {
        Path home = Files.createDirectories(dir.resolve("home"));
        ProcessBuilder builder = new ProcessBuilder(command).directory(project.toFile());
        Map<String, String> environment = builder.environment();
        environment.keySet().removeIf(key -> key.startsWith("READYGATE_") || key.startsWith("LLAMA_CPP_"));
        Map<String, String> settings = new HashMap<>(Map.of(
                "PATH", fakes + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "HOME", home.toString(),
                "JAVA_HOME", jdk.toString(),
                "READYGATE_IMAGE_CACHE", dir.resolve("cache").toString()));
        for (String tool : List.of("chromium", "promtool", "prometheus", "python3", "llama-server")) {
            settings.put(
                    "READYGATE_" + tool.toUpperCase().replace('-', '_'),
                    fakes.resolve("fake-" + tool).toString());
        }
        settings.putAll(extra);
        environment.putAll(settings);
        Path out = dir.resolve("stdout");
        Path err = dir.resolve("stderr");
        Process process =
                builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(process.waitFor(120, TimeUnit.SECONDS))
                .as("%s ended", command)
                .isTrue();
        return new Result(process.exitValue(), Files.readString(out), Files.readString(err));
    }

    private static void program(Path path, String body) throws IOException {
        Files.createDirectories(path.getParent());
        Files.writeString(path, "#!/usr/bin/env bash\n" + body + "\n");
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private record Result(int status, String stdout, String stderr) {
        String output() {
            return stdout + stderr;
        }
    }
}
