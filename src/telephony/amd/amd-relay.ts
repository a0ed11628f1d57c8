/**
 * AMD results across workers. The worker that dials a call runs its
 * detection and names itself in the status callback URL (`worker=`); a
 * carrier's AMD callback may reach any worker (a load balancer, or
 * `serve --workers`), which authenticates and decodes it, then relays the
 * decoded result to the dialling worker as the `machineDetection` worker
 * command. That worker applies it to its call or says the call is over or
 * unknown there.
 */
import type { Coordinator } from "../../cluster/index.js";
import type { DetectionWorkers } from "./amd-callbacks.js";

export function clusterDetectionWorkers(
  cluster: Pick<Coordinator, "workerId" | "sendWorkerCommand" | "onWorkerCommand">,
): DetectionWorkers {
  return {
    workerId: cluster.workerId,
    relay: async (workerId, carrier, detection) =>
      (
        await cluster.sendWorkerCommand(workerId, {
          verb: "machineDetection",
          params: { carrier, detection: { ...detection } },
        })
      ).outcome,
    answer: (apply) =>
      cluster.onWorkerCommand({ machineDetection: ({ detection }) => ({ outcome: apply(detection) }) }),
  };
}
