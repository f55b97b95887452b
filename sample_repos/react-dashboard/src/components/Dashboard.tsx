import { useCallback, useMemo, useState } from "react";

import { api, ApiError } from "../api/client";
import { useAuth } from "../context/AuthContext";
import { useDebounce } from "../hooks/useDebounce";
import { useFetch } from "../hooks/useFetch";
import { useLocalStorage } from "../hooks/useLocalStorage";
import type { MetricPoint, Order } from "../types";
import { Chart } from "./Chart";
import { Column, DataTable } from "./DataTable";
import { Modal } from "./Modal";

type Range = "7d" | "30d" | "90d";
type StatusFilter = "all" | Order["status"];

interface StatCardProps {
  label: string;
  value: string;
  delta?: number;
  hint?: string;
}

const currency = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumFractionDigits: 0 });

const formatCurrency = (value: number) => currency.format(value);

/**
 * Totals and period-over-period change for the KPI cards: revenue, order
 * count and average order value of the second half of the series compared
 * with the first half.
 */
export function summarizeMetrics(points: MetricPoint[]) {
  const half = Math.floor(points.length / 2);
  const sum = (xs: MetricPoint[], f: (p: MetricPoint) => number) => xs.reduce((s, p) => s + f(p), 0);
  const prev = points.slice(0, half);
  const curr = points.slice(half);
  const revenue = sum(curr, (p) => p.revenue);
  const orders = sum(curr, (p) => p.orders);
  const prevRevenue = sum(prev, (p) => p.revenue);
  const prevOrders = sum(prev, (p) => p.orders);
  const pct = (a: number, b: number) => (b === 0 ? undefined : ((a - b) / b) * 100);
  return {
    revenue,
    orders,
    aov: orders ? revenue / orders : 0,
    revenueDelta: pct(revenue, prevRevenue),
    ordersDelta: pct(orders, prevOrders),
    aovDelta: pct(orders ? revenue / orders : 0, prevOrders ? prevRevenue / prevOrders : 0),
  };
}

function StatCard({ label, value, delta, hint }: StatCardProps) {
  const trend = delta === undefined ? "flat" : delta >= 0 ? "up" : "down";
  return (
    <section className={`stat-card stat-card--${trend}`}>
      <h3 className="stat-card__label">{label}</h3>
      <p className="stat-card__value">{value}</p>
      {delta !== undefined && (
        <p className="stat-card__delta">
          {delta >= 0 ? "▲" : "▼"} {Math.abs(delta).toFixed(1)}%<span className="stat-card__period"> vs previous period</span>
        </p>
      )}
      {hint && <p className="stat-card__hint">{hint}</p>}
    </section>
  );
}

function StatusBadge({ status }: { status: Order["status"] }) {
  const labels: Record<Order["status"], string> = {
    pending: "Pending",
    paid: "Paid",
    shipped: "Shipped",
    refunded: "Refunded",
  };
  return <span className={`badge badge--${status}`}>{labels[status]}</span>;
}

/**
 * Groups orders by sales region and returns revenue per region, largest
 * first, for the breakdown bar chart.
 */
export function revenueByRegion(orders: Order[]): { region: string; revenue: number }[] {
  const totals = new Map<string, number>();
  for (const o of orders) {
    if (o.status === "refunded") continue;
    totals.set(o.region, (totals.get(o.region) ?? 0) + o.total);
  }
  return [...totals.entries()].map(([region, revenue]) => ({ region, revenue })).sort((a, b) => b.revenue - a.revenue);
}

export default function Dashboard() {
  const { user, logout, hasRole } = useAuth();
  const [range, setRange] = useLocalStorage<Range>("dashboard.range", "30d");
  const [search, setSearch] = useState("");
  const [status, setStatus] = useState<StatusFilter>("all");
  const [selected, setSelected] = useState<Order | null>(null);
  const [refunding, setRefunding] = useState(false);
  const [refundError, setRefundError] = useState<string | null>(null);
  const debouncedSearch = useDebounce(search, 350);

  const metrics = useFetch((signal) => api.metrics(range, signal), [range]);
  const orders = useFetch(
    (signal) =>
      api.orders(
        { page: 1, pageSize: 200, q: debouncedSearch, status: status === "all" ? undefined : status, sort: "-createdAt" },
        signal,
      ),
    [debouncedSearch, status],
  );

  const summary = useMemo(() => summarizeMetrics(metrics.data ?? []), [metrics.data]);
  const regions = useMemo(() => revenueByRegion(orders.data?.items ?? []), [orders.data]);

  const columns = useMemo<Column<Order>[]>(
    () => [
      { key: "id", header: "Order", sortable: true, width: 120 },
      { key: "customer", header: "Customer", sortable: true },
      { key: "region", header: "Region", sortable: true, width: 120 },
      {
        key: "total",
        header: "Total",
        sortable: true,
        align: "right",
        render: (o) => formatCurrency(o.total),
      },
      { key: "status", header: "Status", render: (o) => <StatusBadge status={o.status} /> },
      {
        key: "createdAt",
        header: "Date",
        sortable: true,
        render: (o) => new Date(o.createdAt).toLocaleDateString(),
      },
    ],
    [],
  );

  /**
   * Asks the backend to refund the order shown in the details dialog and
   * refreshes the orders and metrics afterwards.
   */
  const handleRefund = useCallback(async () => {
    if (!selected) return;
    setRefunding(true);
    setRefundError(null);
    try {
      await api.refundOrder(selected.id);
      setSelected(null);
      orders.reload();
      metrics.reload();
    } catch (e) {
      setRefundError(e instanceof ApiError ? e.message : "Refund failed");
    } finally {
      setRefunding(false);
    }
  }, [selected, orders, metrics]);

  const closeDetails = useCallback(() => {
    setSelected(null);
    setRefundError(null);
  }, []);

  return (
    <div className="dashboard">
      <header className="dashboard__header">
        <div>
          <h1>Sales overview</h1>
          <p className="dashboard__subtitle">Signed in as {user?.name ?? "…"}</p>
        </div>
        <div className="dashboard__actions">
          <div className="segmented" role="group" aria-label="Date range">
            {(["7d", "30d", "90d"] as Range[]).map((r) => (
              <button key={r} type="button" aria-pressed={range === r} onClick={() => setRange(r)}>
                {r === "7d" ? "7 days" : r === "30d" ? "30 days" : "90 days"}
              </button>
            ))}
          </div>
          <button type="button" className="button--ghost" onClick={logout}>
            Sign out
          </button>
        </div>
      </header>

      {metrics.error && (
        <div role="alert" className="banner banner--error">
          Could not load metrics: {metrics.error.message}{" "}
          <button type="button" onClick={metrics.reload}>
            Retry
          </button>
        </div>
      )}

      <div className="dashboard__stats">
        <StatCard label="Revenue" value={formatCurrency(summary.revenue)} delta={summary.revenueDelta} />
        <StatCard label="Orders" value={summary.orders.toLocaleString()} delta={summary.ordersDelta} />
        <StatCard
          label="Average order"
          value={formatCurrency(summary.aov)}
          delta={summary.aovDelta}
          hint="Revenue divided by orders"
        />
      </div>

      <div className="dashboard__charts">
        <section className="panel">
          <h2>Revenue</h2>
          {metrics.loading && !metrics.data ? (
            <div className="skeleton skeleton--chart" />
          ) : (
            <Chart
              labels={(metrics.data ?? []).map((p) => p.date)}
              series={[{ label: "Revenue", values: (metrics.data ?? []).map((p) => p.revenue) }]}
              formatValue={formatCurrency}
            />
          )}
        </section>
        <section className="panel">
          <h2>By region</h2>
          <Chart
            type="bar"
            labels={regions.map((r) => r.region)}
            series={[{ label: "Revenue", values: regions.map((r) => r.revenue), color: "#16a34a" }]}
            formatValue={formatCurrency}
            height={240}
          />
        </section>
      </div>

      <section className="panel">
        <div className="panel__toolbar">
          <h2>Recent orders</h2>
          <input
            type="search"
            placeholder="Search customer or order id"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
            aria-label="Search orders"
          />
          <select value={status} onChange={(e) => setStatus(e.target.value as StatusFilter)} aria-label="Status">
            <option value="all">All statuses</option>
            <option value="pending">Pending</option>
            <option value="paid">Paid</option>
            <option value="shipped">Shipped</option>
            <option value="refunded">Refunded</option>
          </select>
        </div>
        {orders.error ? (
          <p className="panel__error">Orders are unavailable right now.</p>
        ) : (
          <DataTable
            rows={orders.data?.items ?? []}
            columns={columns}
            rowKey={(o) => o.id}
            pageSize={15}
            loading={orders.loading}
            initialSort={{ key: "createdAt", direction: "desc" }}
            emptyMessage={debouncedSearch ? `No orders match "${debouncedSearch}"` : "No orders yet"}
            onRowClick={setSelected}
          />
        )}
      </section>

      <Modal
        open={selected !== null}
        title={selected ? `Order ${selected.id}` : ""}
        onClose={closeDetails}
        footer={
          selected && hasRole("admin") && selected.status !== "refunded" ? (
            <button type="button" className="button--danger" disabled={refunding} onClick={handleRefund}>
              {refunding ? "Refunding…" : `Refund ${formatCurrency(selected.total)}`}
            </button>
          ) : null
        }
      >
        {selected && (
          <dl className="details">
            <dt>Customer</dt>
            <dd>{selected.customer}</dd>
            <dt>Region</dt>
            <dd>{selected.region}</dd>
            <dt>Total</dt>
            <dd>{formatCurrency(selected.total)}</dd>
            <dt>Status</dt>
            <dd>
              <StatusBadge status={selected.status} />
            </dd>
            <dt>Placed</dt>
            <dd>{new Date(selected.createdAt).toLocaleString()}</dd>
          </dl>
        )}
        {refundError && (
          <p role="alert" className="field-error">
            {refundError}
          </p>
        )}
      </Modal>
    </div>
  );
}
