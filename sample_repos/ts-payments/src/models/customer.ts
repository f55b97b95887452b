export interface Address {
  line1: string;
  line2?: string;
  city: string;
  postalCode: string;
  country: string; // ISO 3166-1 alpha-2
}

export interface Customer {
  id: string;
  email: string;
  name: string;
  stripeCustomerId?: string;
  defaultPaymentMethodId?: string;
  billingAddress?: Address;
  taxExempt: boolean;
  createdAt: Date;
}

export type NewCustomer = Omit<Customer, "id" | "createdAt" | "stripeCustomerId">;
