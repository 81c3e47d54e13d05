package dev.pcm.neo4j;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.QueryExecutionException;

/**
 * Starts an embedded Neo4j DBMS with Bolt on host:port and blocks until SIGTERM/SIGINT.
 *
 * <p>Arguments (each falls back to an environment variable, then a default):
 * --port (NEO4J_BOLT_PORT, 7687), --host (NEO4J_BOLT_HOST, 127.0.0.1),
 * --data (NEO4J_DATA_DIR, var/neo4j/data). Auth: enabled with user neo4j and password
 * NEO4J_PASSWORD (default pcm-dev-password) unless NEO4J_AUTH=none.
 */
public final class Launcher {
    private Launcher() {}

    public static void main(String[] args) throws Exception {
        String host = env("NEO4J_BOLT_HOST", "127.0.0.1");
        int port = Integer.parseInt(env("NEO4J_BOLT_PORT", "7687"));
        String data = env("NEO4J_DATA_DIR", "var/neo4j/data");
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--port" -> port = Integer.parseInt(args[i + 1]);
                case "--host" -> host = args[i + 1];
                case "--data" -> data = args[i + 1];
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        boolean auth = !"none".equalsIgnoreCase(env("NEO4J_AUTH", ""));
        String password = env("NEO4J_PASSWORD", "pcm-dev-password");

        long t0 = System.nanoTime();
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(
                        Path.of(data).toAbsolutePath())
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(host, port))
                .setConfig(GraphDatabaseSettings.auth_enabled, auth)
                // Small footprint: this is a dev/test server on a shared machine.
                .setConfig(GraphDatabaseSettings.pagecache_memory, 128L * 1024 * 1024)
                // Bolt's defaults wait ~10 s on shutdown (connection drain + netty quiet period);
                // a dev server restarted by scripts should stop in about a second.
                .setConfig(BoltConnectorInternalSettings.enable_local_connector, false)
                .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time,
                        Duration.ofMillis(500))
                .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time,
                        Duration.ofMillis(500))
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout,
                        Duration.ofSeconds(2))
                .build();

        if (auth) {
            try {
                setPassword(dbms, password);
            } catch (RuntimeException e) {
                dbms.shutdown();
                throw e;
            }
        }

        CountDownLatch stopped = new CountDownLatch(1);
        // The JVM runs shutdown hooks on SIGTERM/SIGINT; a clean shutdown flushes the store
        // so the next start needs no recovery.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("neo4j-launcher: shutting down");
            dbms.shutdown();
            stopped.countDown();
        }, "neo4j-launcher-shutdown"));

        System.out.printf("neo4j-launcher: bolt://%s:%d ready in %d ms (auth=%s, data=%s)%n",
                host, port, (System.nanoTime() - t0) / 1_000_000, auth, data);
        System.out.flush();
        stopped.await();
    }

    /**
     * Embedded Neo4j has no neo4j-admin set-initial-password step; set it on the system
     * database instead. Neo4j refuses to "change" a password to its current value, which on
     * a restart means the password is already right.
     */
    private static void setPassword(DatabaseManagementService dbms, String password) {
        GraphDatabaseService system = dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
        try {
            system.executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED",
                    Map.of("pw", password));
        } catch (QueryExecutionException e) {
            if (!String.valueOf(e.getMessage()).contains("cannot be the same")) {
                throw e;
            }
        }
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }
}
