package dev.readygate.support;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for servers a test starts and starts again on the same port (the simulated engine going down and coming back,
 * a container restarted with host networking). They are taken below the kernel's ephemeral range: a port from {@code
 * new ServerSocket(0)} lies inside it, so once the test's server lets it go (an engine restart) any outgoing connection
 * on the machine may take it as its local port, and the server cannot bind it again. With several test JVMs probing
 * every 20 ms that happened often enough to fail tests with "Address already in use".
 *
 * <p>Each port is handed out once per JVM: a simulator takes three (engine, admin, daemon health) before it binds any,
 * and two calls that drew the same free port gave it two of them ("port must differ from admin-port").
 */
public final class FreePorts {

    private static final int LOWEST = 10_000;

    private static final Set<Integer> issued = ConcurrentHashMap.newKeySet();

    private FreePorts() {}

    /** A port that nothing listens on now, outside the ephemeral range. */
    public static int free() {
        int[] ephemeral = ephemeralRange();
        int highest = Math.min(ephemeral[0], 65_536);
        int lowest = highest - LOWEST > 2_000 ? LOWEST : 1_024;
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(lowest, highest);
            if (bindable(port) && issued.add(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no free port between " + lowest + " and " + highest);
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            return true;
        } catch (IOException ex) {
            return false;
        }
    }

    private static int[] ephemeralRange() {
        Path range = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        try {
            String[] parts = Files.readString(range).strip().split("\\s+");
            return new int[] {Integer.parseInt(parts[0]), Integer.parseInt(parts[1])};
        } catch (IOException | RuntimeException ex) {
            return new int[] {32_768, 60_999};
        }
    }
}
