import { AssignerProtocol, PartitionAssigners, type Admin, type PartitionAssigner } from "kafkajs";

/**
 * kafkajs's round-robin assigner, with this member's HTTP address in its group metadata (user
 * data), as Kafka Streams carries application.server: any member can then find which address owns
 * a partition from the group's description. The protocol name and the assignment are unchanged,
 * so members with and without an address share a group.
 */
export function advertisingAssigner(address: string): PartitionAssigner {
  return (config) => {
    const inner = PartitionAssigners.roundRobin(config);
    return {
      ...inner,
      protocol: ({ topics }) => ({
        name: inner.name,
        metadata: AssignerProtocol.MemberMetadata.encode({
          version: inner.version,
          topics,
          userData: Buffer.from(address, "utf8"),
        }),
      }),
    };
  };
}

/** The address the member currently assigned a partition advertises (undefined: none, or no address). */
export async function partitionOwnerAddress(
  admin: Admin,
  groupId: string,
  topic: string,
  partition: number,
): Promise<string | undefined> {
  const { groups } = await admin.describeGroups([groupId]);
  for (const member of groups[0]?.members ?? []) {
    if (member.memberAssignment.length === 0) continue;
    const assignment = AssignerProtocol.MemberAssignment.decode(member.memberAssignment);
    if (assignment?.assignment[topic]?.includes(partition) !== true) continue;
    const address = AssignerProtocol.MemberMetadata.decode(member.memberMetadata)?.userData.toString("utf8");
    return address === undefined || address === "" ? undefined : address;
  }
  return undefined;
}
