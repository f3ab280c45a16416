package io.swapstream.local;

import java.lang.management.ManagementFactory;

/**
 * The JVM's CPU seconds, compile time and collection time so far: a round's figures, with the
 * broker's, show where the two cores went besides the two stage threads.
 */
public record JvmCpu(double cpuSecs, double compileSecs, double gcSecs) {
    public static JvmCpu now() {
        double cpu = ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getProcessCpuTime() / 1e9 : 0;
        var jit = ManagementFactory.getCompilationMXBean();
        double compile = jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() / 1e3 : 0;
        double gc = 0;
        for (var g : ManagementFactory.getGarbageCollectorMXBeans()) gc += Math.max(0, g.getCollectionTime()) / 1e3;
        return new JvmCpu(cpu, compile, gc);
    }

    public JvmCpu minus(JvmCpu o) {
        return new JvmCpu(cpuSecs - o.cpuSecs, compileSecs - o.compileSecs, gcSecs - o.gcSecs);
    }
}
