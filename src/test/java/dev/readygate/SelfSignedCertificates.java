package dev.readygate;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import reactor.netty.http.Http11SslContextSpec;
import reactor.netty.http.server.HttpServer;

/** A TLS engine's certificate for tests: self-signed, made by the JDK's {@code keytool}, trusted by nobody. */
public final class SelfSignedCertificates {

    private SelfSignedCertificates() {}

    /** A Reactor Netty server on {@code 127.0.0.1}, any free port, speaking TLS with {@link #keyManagers}' certificate. */
    public static HttpServer tlsServer(Path dir) throws Exception {
        Http11SslContextSpec tls = Http11SslContextSpec.forServer(keyManagers(dir));
        return HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .secure(spec -> spec.sslContext((reactor.netty.tcp.SslProvider.GenericSslContextSpec<?>) tls));
    }

    /** A key manager for a self-signed certificate for {@code 127.0.0.1} that {@code keytool} makes now in {@code dir}. */
    public static KeyManagerFactory keyManagers(Path dir) throws Exception {
        Path keystore = dir.resolve("engine.p12");
        Process keytool = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "keytool")
                                .toString(),
                        "-genkeypair",
                        "-alias",
                        "engine",
                        "-keyalg",
                        "EC",
                        "-groupname",
                        "secp256r1",
                        "-dname",
                        "CN=127.0.0.1",
                        "-validity",
                        "2",
                        "-storetype",
                        "PKCS12",
                        "-keystore",
                        keystore.toString(),
                        "-storepass",
                        "changeit",
                        "-keypass",
                        "changeit")
                .redirectErrorStream(true)
                .start();
        String printed = new String(keytool.getInputStream().readAllBytes());
        assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(keytool.exitValue()).as(printed).isZero();
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keystore)) {
            store.load(in, "changeit".toCharArray());
        }
        KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        factory.init(store, "changeit".toCharArray());
        return factory;
    }
}
