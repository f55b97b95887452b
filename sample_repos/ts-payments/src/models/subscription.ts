export enum SubscriptionStatus {
  Trialing = "trialing",
  Active = "active",
  PastDue = "past_due",
  Canceled = "canceled",
  Incomplete = "incomplete",
}

export enum BillingInterval {
  Month = "month",
  Year = "year",
}

export interface Plan {
  id: string;
  name: string;
  stripePriceId: string;
  interval: BillingInterval;
  unitAmount: number;
  currency: "usd" | "eur" | "gbp";
  trialDays?: number;
}

export interface Subscription {
  id: string;
  customerId: string;
  planId: string;
  status: SubscriptionStatus;
  stripeSubscriptionId: string;
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
  cancelAtPeriodEnd: boolean;
  quantity: number;
  createdAt: Date;
}

export interface CreateSubscriptionInput {
  customerId: string;
  planId: string;
  quantity?: number;
  couponCode?: string;
  paymentMethodId?: string;
}
