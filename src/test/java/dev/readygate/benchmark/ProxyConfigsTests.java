package dev.readygate.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.ExternalTool;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The proxies the gateway is measured beside are configured as their own checkers accept: nginx {@code -t} and
 * HAProxy {@code -c} on the very files the benchmark writes, with the settings that make them streaming proxies with
 * passive health (a typo would otherwise show up only as a benchmark that measured a proxy on its defaults).
 */
@Tag("nginx")
@Tag("haproxy")
class ProxyConfigsTests {

    @TempDir
    Path dir;

    @Test
    void nginxAcceptsItsConfigurationAndItStreamsWithPassiveHealth() throws Exception {
        String config = ProxyConfigs.nginx(dir.toString(), 18080, 18000);
        Files.writeString(dir.resolve("nginx.conf"), config);

        String out = run(List.of(ExternalTool.NGINX.path().toString(), "-t", "-p", dir.toString(), "-c", "nginx.conf"));

        assertThat(out).contains("syntax is ok").contains("test is successful");
        assertThat(config)
                .contains("proxy_buffering off;")
                .contains("max_fails=3")
                .contains("proxy_http_version 1.1;");
    }

    @Test
    void haproxyAcceptsItsConfigurationAndItWatchesAnswersOfTheEngine() throws Exception {
        Path file = dir.resolve("haproxy.cfg");
        String config = ProxyConfigs.haproxy(18081, 2, 18000);
        Files.writeString(file, config);

        String out = run(List.of(ExternalTool.HAPROXY.path().toString(), "-c", "-f", file.toString()));

        assertThat(out).containsIgnoringCase("configuration file is valid");
        assertThat(config)
                .contains("observe layer7")
                .contains("option http-no-delay")
                .doesNotContain("http-buffer-request");
    }

    @Test
    void withTwoReplicasEachProxyTakesTurnsAndTriesAFailedConnectionOnTheOther() throws Exception {
        Files.writeString(dir.resolve("nginx.conf"), ProxyConfigs.nginx(dir.toString(), 18080, 18000, 18001));
        Path file = dir.resolve("haproxy.cfg");
        String haproxy = ProxyConfigs.haproxy(18081, 2, 18000, 18001);
        Files.writeString(file, haproxy);

        String nginxOut =
                run(List.of(ExternalTool.NGINX.path().toString(), "-t", "-p", dir.toString(), "-c", "nginx.conf"));
        String haproxyOut = run(List.of(ExternalTool.HAPROXY.path().toString(), "-c", "-f", file.toString()));

        assertThat(nginxOut).contains("test is successful");
        assertThat(Files.readString(dir.resolve("nginx.conf")))
                .contains("server 127.0.0.1:18000 max_fails=3")
                .contains("server 127.0.0.1:18001 max_fails=3")
                .contains("proxy_next_upstream error");
        assertThat(haproxyOut).containsIgnoringCase("configuration file is valid");
        assertThat(haproxy)
                .contains("server engine0 127.0.0.1:18000 check")
                .contains("server engine1 127.0.0.1:18001 check")
                .contains("option redispatch");
        assertThat(ProxyConfigs.haproxy(18081, 2, 18000)).doesNotContain("redispatch");
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(out).isZero();
        return out;
    }
}
