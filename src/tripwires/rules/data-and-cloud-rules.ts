import type { DestructiveRule } from "./rule-definition.ts";

/** Deleting data in databases, clusters, infrastructure and cloud accounts. (rule-definition.ts holds the ids; destructive-rules.ts the lookup.) */
export const DATA_AND_CLOUD_RULES: readonly DestructiveRule[] = [
  {
    id: "sql-drop",
    version: 1,
    severity: "critical",
    description:
      "SQL `DROP` (table, database, schema, view, index), in a `sql` event or in a psql/mysql/sqlite3 command; also `dropdb`.",
    alerting: [
      "DROP TABLE users",
      "psql -c 'DROP DATABASE prod'",
      'mysql -e "DROP TABLE orders"',
      'sqlite3 app.db "DROP TABLE t"',
    ],
    benign: ['grep -r "DROP TABLE" .', "SELECT 'DROP TABLE x'", "psql -c 'SELECT 1'"],
  },
  {
    id: "sql-truncate",
    version: 1,
    severity: "critical",
    description: "SQL `TRUNCATE`.",
    alerting: ["TRUNCATE TABLE orders", "psql -c 'truncate users'"],
    benign: ["SELECT count(*) FROM orders"],
  },
  {
    id: "sql-delete-without-where",
    version: 1,
    severity: "critical",
    description: "SQL `DELETE` with no WHERE clause, or a WHERE that is always true (`WHERE 1=1`, `WHERE true`).",
    alerting: ["DELETE FROM users", "delete from t where 1=1"],
    benign: ["DELETE FROM users WHERE id = 1"],
  },
  {
    id: "sql-update-without-where",
    version: 1,
    severity: "critical",
    description: "SQL `UPDATE` with no WHERE clause or an always-true one.",
    alerting: ["UPDATE users SET admin = true"],
    benign: ["UPDATE users SET admin = false WHERE id = 7"],
  },
  {
    id: "infra-terraform-destroy",
    version: 1,
    severity: "critical",
    description: "`terraform destroy`, `terraform apply -destroy` (also `tofu`).",
    alerting: ["terraform destroy -auto-approve", "terraform -chdir=infra apply -destroy", "tofu destroy"],
    benign: ["terraform plan", "terraform plan -destroy", "terraform apply"],
  },
  {
    id: "infra-kubectl-delete",
    version: 1,
    severity: "critical",
    description: "`kubectl delete` (any resource) unless it is a client/server dry run.",
    alerting: ["kubectl delete namespace prod", "kubectl -n prod delete pods --all"],
    benign: ["kubectl get pods", "kubectl delete pod x --dry-run=client", "kubectl describe deployment api"],
  },
  {
    id: "infra-helm-uninstall",
    version: 1,
    severity: "critical",
    description: "`helm uninstall` / `helm delete` (and aliases `del`, `un`) unless `--dry-run`.",
    alerting: ["helm uninstall api", "helm delete --purge api"],
    benign: ["helm list", "helm uninstall api --dry-run"],
  },
  {
    id: "cloud-destructive-delete",
    version: 1,
    severity: "critical",
    description:
      "Cloud deletes that destroy data or whole environments, whatever the account: recursive " +
      "object-store deletes (`aws s3 rm --recursive`, `gsutil rm -r`, `gcloud storage rm -r`, `az " +
      "storage blob delete-batch`), bucket/container removal, instance termination, and deleting " +
      "databases, tables, volumes, file systems, clusters, stacks, projects or resource groups " +
      "(aws/gcloud/az/bq).",
    alerting: [
      "aws s3 rm s3://prod-data --recursive",
      "aws s3 rb s3://logs --force",
      "aws ec2 terminate-instances --instance-ids i-0abc",
      "gsutil -m rm -r gs://backups",
      "gcloud projects delete my-project",
      "az group delete -n prod-rg --yes",
      "aws rds delete-db-instance --db-instance-identifier db1",
    ],
    benign: [
      "aws s3 ls s3://prod-data",
      "aws s3 cp build s3://site --recursive",
      "gcloud compute instances list",
      "aws ec2 terminate-instances --dry-run --instance-ids i-0abc",
    ],
  },
  {
    id: "cloud-delete",
    version: 1,
    severity: "warning",
    description:
      "Any other delete verb of the aws, gcloud and az CLIs (one object, a security group, a " +
      "function): the guard does not know whether the account is production.",
    alerting: [
      "aws s3 rm s3://bucket/key.txt",
      "aws lambda delete-function --function-name f",
      "gcloud compute firewall-rules delete allow-ssh",
      "az storage blob delete -c c -n b",
    ],
    benign: ["aws lambda list-functions", "gcloud config set project p", "az account show"],
  },
];
