# Ordo's Ruby host: runs the Ruby that modules ship (functions of both of Puppet's APIs, ERB
# templates) for an Ordo process. Ordo starts it once, as a child, and speaks with it over
# its standard input and output, one JSON message a line (docs/ruby.md):
#
#   Ordo -> Ruby  {"op": "function4" | "function3" | "call4" | "call3" | "erb" | "ping", ...}
#   Ruby -> Ordo  {"cb": "call_function" | "lookupvar" | "block" | "log" | ...}  (a callback,
#                 answered by Ordo with {"ok": value} or {"err": message} before Ruby goes on)
#   Ruby -> Ordo  {"ok": value} or {"err": {...}}                            (the answer)
#
# While Ruby waits for a callback's answer, Ordo may send a new request (a Ruby function
# calling a Puppet function calling a Ruby function): it is served, then the wait goes on.
#
# Values are JSON with tagged objects for what JSON lacks: {"t":"hash","v":[k,v,...]},
# {"t":"default"}, {"t":"regexp","v":src}, {"t":"type","v":text}, {"t":"sensitive","v":x},
# {"t":"timestamp","v":text}, {"t":"timespan","v":text}, {"t":"opaque","v":id}.
#
# This is Ordo's own stand-in for the parts of Puppet's Ruby API that module code uses; it
# does not load Puppet.

require 'json'
require 'erb'
require 'set'

# Puppet's errors, first: a callback's error is one.
module Puppet
  class Error < RuntimeError; end
  class ParseError < Error; end
end

module OrdoHost
  # The memory module code may use (address space, set by Ordo): past it, an allocation
  # raises NoMemoryError, which fails the request instead of exhausting the machine.
  MEMORY = ENV['ORDO_RUBY_MEMORY'].to_i
  Process.setrlimit(Process::RLIMIT_AS, MEMORY) if MEMORY > 0

  PROTO_OUT = STDOUT.dup
  PROTO_IN = STDIN.dup
  PROTO_OUT.binmode
  PROTO_OUT.sync = true
  PROTO_IN.binmode
  # What module code prints goes to standard error, which Ordo keeps for its messages.
  STDOUT.reopen(STDERR)
  STDIN.reopen(File::NULL)

  # A value Ordo holds that Ruby only passes along (a Deferred, an Iterator...).
  class Opaque
    attr_reader :id
    def initialize(id)
      @id = id
    end
  end

  # An answer that is protocol data, not a Puppet value.
  Raw = Struct.new(:json)

  # An error of a callback: Ordo keeps the original error and reports it, unless Ruby code
  # rescues it.
  class CallbackError < Puppet::ParseError; end

  @functions4 = {}
  @functions3 = {}
  @blocks = []

  class << self
    attr_reader :functions4, :functions3, :blocks

    def send_msg(msg)
      PROTO_OUT.write(JSON.generate(msg))
      PROTO_OUT.write("\n")
    end

    def read_msg
      line = PROTO_IN.gets
      exit(0) if line.nil?
      JSON.parse(line)
    end

    # A callback: sends it and serves Ordo's requests until Ordo answers it.
    def callback(kind, fields = {})
      send_msg(fields.merge('cb' => kind))
      loop do
        msg = read_msg
        if msg.key?('op')
          serve(msg)
          next
        end
        raise CallbackError, msg['err'] if msg.key?('err')
        return decode(msg['ok'])
      end
    end

    def main
      loop { serve(read_msg) }
    end

    def serve(msg)
      result = begin
        r = dispatch(msg)
        { 'ok' => r.is_a?(Raw) ? r.json : encode(r) }
      rescue Exception => e # rubocop:disable Lint/RescueException
        raise if e.is_a?(SystemExit)
        { 'err' => error_of(e) }
      end
      send_msg(result)
    end

    def error_of(e)
      bt = (e.backtrace || []).reject { |l| l.include?(__FILE__) }
      {
        'class' => e.class.name.to_s,
        'message' => if e.is_a?(NoMemoryError)
                       "#{e.message}: Ruby may use #{MEMORY} bytes of memory"
                     else
                       e.message.to_s.encode('UTF-8', invalid: :replace, undef: :replace)
                     end,
        'callback' => e.is_a?(CallbackError),
        'puppet' => e.is_a?(Puppet::Error),
        'where' => bt.first.to_s,
      }
    end

    def dispatch(msg)
      case msg['op']
      when 'ping' then 'pong'
      when 'libdirs'
        msg['dirs'].each { |d| $LOAD_PATH.unshift(d) unless $LOAD_PATH.include?(d) }
        nil
      when 'function4' then describe4(msg['name'], msg['file'])
      when 'function3' then describe3(msg['name'], msg['file'])
      when 'call4' then call4(msg)
      when 'call3' then call3(msg)
      when 'erb' then erb(msg)
      else raise ArgumentError, "unknown request #{msg['op']}"
      end
    end

    # ---- values ---------------------------------------------------------------------------

    def decode(v)
      case v
      when Array then v.map { |x| decode(x) }
      when Hash
        case v['t']
        when 'hash'
          h = {}
          v['v'].each_slice(2) { |k, x| h[decode(k)] = decode(x) }
          h
        when 'default' then :default
        when 'regexp' then Regexp.new(v['v'])
        when 'type' then Puppet::Pops::Types::OrdoType.of(v['v'])
        when 'sensitive' then Puppet::Pops::Types::PSensitiveType::Sensitive.new(decode(v['v']))
        when 'timestamp' then Puppet::Pops::Time::Timestamp.new(v['v'])
        when 'timespan' then Puppet::Pops::Time::Timespan.new(v['v'])
        when 'opaque' then Opaque.new(v['v'])
        else raise ArgumentError, "unknown value tag #{v['t']}"
        end
      else v
      end
    end

    def encode(v)
      case v
      when nil, true, false then v
      when Integer
        raise ArgumentError, "Integer #{v} is out of Puppet's range" unless v.bit_length < 64

        v
      when Float
        raise ArgumentError, "Float #{v} is not a Puppet value" if v.nan? || v.infinite?

        v
      when String then v.encoding == Encoding::UTF_8 && v.valid_encoding? ? v : v.dup.force_encoding('UTF-8').scrub
      when Symbol
        return { 't' => 'default' } if v == :default
        return nil if v == :undef

        v.to_s
      when Array then v.map { |x| encode(x) }
      when Hash then { 't' => 'hash', 'v' => v.flat_map { |k, x| [encode(k), encode(x)] } }
      when Set then v.map { |x| encode(x) }
      when Regexp then { 't' => 'regexp', 'v' => v.source }
      when Puppet::Pops::Types::OrdoType then { 't' => 'type', 'v' => v.to_s }
      when Puppet::Pops::Types::PSensitiveType::Sensitive then { 't' => 'sensitive', 'v' => encode(v.unwrap) }
      when Puppet::Pops::Time::Timestamp then { 't' => 'timestamp', 'v' => v.to_s }
      when Puppet::Pops::Time::Timespan then { 't' => 'timespan', 'v' => v.to_s }
      when Opaque then { 't' => 'opaque', 'v' => v.id }
      when Puppet::Resource then { 't' => 'type', 'v' => v.to_s }
      else
        raise ArgumentError, "a value of Ruby class #{v.class} is not a Puppet value"
      end
    end

    # ---- the 4.x API ----------------------------------------------------------------------

    def load_file(file)
      load(file, false) if file
    end

    def describe4(name, file)
      load_file(file) unless @functions4.key?(name)
      klass = @functions4[name] or raise Puppet::ParseError, "#{file} does not define the function '#{name}'"

      Raw.new({ 'dispatches' => klass.ordo_dispatches.map(&:to_h), 'aliases' => klass.ordo_aliases })
    end

    def call4(msg)
      klass = @functions4.fetch(msg['name'])
      d = klass.ordo_dispatches.fetch(msg['dispatch'])
      args = decode(msg['args'])
      fn = klass.new(ScopeProxy.new(true), nil)
      fn.ordo_scope = ScopeProxy.new(false)
      args.unshift(fn.ordo_scope) if d.scope_param?
      block = msg['block'] ? block_proc : nil
      fn.send(d.method_name, *args, &block)
    end

    def block_proc
      proc { |*a| OrdoHost.callback('block', 'args' => OrdoHost.encode(a)) }
    end

    # ---- the 3.x API ----------------------------------------------------------------------

    def describe3(name, file)
      load_file(file) unless @functions3.key?(name)
      f = @functions3[name] or raise Puppet::ParseError, "#{file} does not define the function '#{name}'"

      Raw.new({ 'type' => f[:type].to_s, 'arity' => f[:arity] })
    end

    def call3(msg)
      name = msg['name']
      f = @functions3.fetch(name)
      args = decode(msg['args'])
      arity = f[:arity]
      if arity >= 0 && args.size != arity
        raise ArgumentError, "#{name}(): Wrong number of arguments given (#{args.size} for #{arity})"
      elsif arity < 0 && args.size < (arity + 1).abs
        raise ArgumentError, "#{name}(): Wrong number of arguments given (#{args.size} for minimum #{(arity + 1).abs})"
      end
      scope = ScopeProxy.new(false)
      r = scope.instance_exec(args, &f[:block])
      f[:type] == :rvalue ? r : nil
    end

    # ---- ERB ------------------------------------------------------------------------------

    def erb(msg)
      wrapper = TemplateWrapper.new(ScopeProxy.new(false), msg['file'])
      decode(msg['vars']).each do |name, value|
        wrapper.instance_variable_set("@#{name.gsub(/[^\w]/, '_')}", value)
      end
      template = ERB.new(msg['text'], trim_mode: '-')
      template.filename = msg['file'] || '(erb)'
      # The binding of a method, as Puppet's: a `def` in a template defines a method of
      # the wrapper class, which later templates see.
      template.result(wrapper.ordo_binding)
    end
  end

  # The scope a function or template sees: variables and functions are Ordo's.
  class ScopeProxy
    def initialize(top)
      @top = top
    end

    def qualify(name)
      name = name.to_s
      @top && !name.start_with?('::') ? "::#{name}" : name
    end

    def lookupvar(name, _options = {})
      OrdoHost.callback('lookupvar', 'name' => qualify(name))
    end

    def [](name, _options = {})
      lookupvar(name)
    end

    def exist?(name)
      OrdoHost.callback('exist', 'name' => qualify(name))
    end

    def include?(name)
      !lookupvar(name).nil?
    end

    def to_hash(*_)
      OrdoHost.callback('to_hash')
    end

    def call_function(name, args = [], &block)
      raise ArgumentError, 'a block given to call_function from Ruby is not supported by Ordo' if block

      OrdoHost.callback('call_function', 'name' => name.to_s, 'args' => OrdoHost.encode(Array(args)))
    end

    def function_exists?(name)
      OrdoHost.callback('function_exists', 'name' => name.to_s)
    end

    def findresource(type, title = nil)
      type, title = Puppet::Resource.type_and_title(type, nil) if title.nil?
      found = OrdoHost.callback('findresource', 'type' => type.to_s, 'title' => title.to_s)
      found ? Puppet::Resource.new(type, title) : nil
    end

    def loaders
      Loaders
    end

    def environment
      Puppet::Node::Environment.new('production')
    end

    def source
      nil
    end

    def compiler
      self
    end

    def catalog
      self
    end

    def warning(msg)
      Puppet.warning(msg)
    end

    def debug(msg); end

    def notice(msg)
      Puppet.notice(msg)
    end

    def method_missing(name, *args, &block)
      if (fname = name.to_s[/\Afunction_(.+)\z/, 1])
        raise ArgumentError, "#{name}(): Wrong number of arguments given (#{args.size} for 1)" unless args.size == 1
        raise ArgumentError, "custom functions must be called with a single array that contains the arguments. For example, function_example([1]) instead of function_example(1)" unless args[0].is_a?(Array)

        return OrdoHost.callback('function3', 'name' => fname, 'args' => OrdoHost.encode(args[0]))
      end
      super
    end

    def respond_to_missing?(name, include_private = false)
      name.to_s.start_with?('function_') || super
    end
  end

  # Puppet's loaders, as far as functions ask them whether a function exists.
  module Loaders
    def self.load(kind, name)
      kind.to_sym == :function && OrdoHost.callback('function_exists', 'name' => name.to_s) ? name.to_s : nil
    end

    def self.private_environment_loader
      self
    end

    def self.public_environment_loader
      self
    end

    def self.puppet_system_loader
      self
    end

    def self.private_loader
      self
    end
  end

  # What a template's code runs in: Puppet's TemplateWrapper.
  class TemplateWrapper
    def initialize(scope, file)
      @__scope__ = scope
      @__file__ = file
    end

    def scope
      @__scope__
    end

    def file
      @__file__
    end

    def has_variable?(name)
      scope.include?(name.to_s)
    end

    def ordo_binding
      binding
    end

    def classes
      OrdoHost.callback('classes')
    end

    def all_tags
      OrdoHost.callback('tags')
    end

    def tags
      raise NotImplementedError, "Call 'all_tags' instead."
    end

    def to_s
      "template[#{@__file__ || 'inline'}]"
    end
  end
end

# ---- Puppet's Ruby API, as far as modules use it -------------------------------------------

module Puppet
  class Error < RuntimeError
    attr_accessor :original, :file, :line, :pos
    def initialize(message = nil, original = nil)
      super(message)
      @original = original
    end
  end
  class ParseError < Error
    def initialize(message = nil, file = nil, line = nil, pos = nil, original = nil)
      super(message, original)
      @file = file
      @line = line
      @pos = pos
    end
  end
  class DevError < Error; end
  class ExecutionFailure < Error; end
  class ParseErrorWithIssue < ParseError; end
  class PreformattedError < ParseError; end

  SETTINGS = {
    environment: 'production', strict_variables: false, strict: :warning,
    vardir: '/opt/puppetlabs/puppet/cache', confdir: '/etc/puppetlabs/puppet',
    codedir: '/etc/puppetlabs/code', disable_warnings: [], node_name_value: nil,
  }.freeze

  class << self
    def [](key)
      SETTINGS[key.to_sym]
    end

    def settings
      SETTINGS
    end

    %w[warning notice err info alert crit emerg].each do |level|
      define_method(level) do |msg|
        OrdoHost.callback('log', 'level' => level, 'message' => msg.to_s)
        nil
      end
    end

    def debug(_msg)
      nil
    end

    def warn_once(_kind, _key, message, *_rest)
      warning(message)
    end

    def deprecation_warning(message, _key = nil)
      @deprecations ||= Set.new
      warning(message) if @deprecations.add?(message)
    end

    def lookup(_key, *_rest)
      yield if block_given?
    end

    def features
      Features
    end

    def version
      '7.23.0'
    end

    def run_mode
      RunMode
    end
  end

  module Features
    def self.method_missing(*_args)
      false
    end

    def self.respond_to_missing?(*_args)
      true
    end
  end

  module RunMode
    def self.server?
      true
    end

    def self.name
      :server
    end
  end

  class Resource
    def initialize(ref, title = nil)
      @ref = if title.nil?
               ref.to_s
             else
               "#{ref.to_s.split('::').map(&:capitalize).join('::')}[#{title}]"
             end
    end

    # `Type[title]` split (Puppet's `Resource.type_and_title`).
    def self.type_and_title(ref, title)
      return [ref.to_s, title.to_s] unless title.nil?
      raise ArgumentError, "Could not parse for environment production: #{ref}" unless ref.to_s =~ %r{\A([^\[]+)\[(.*)\]\z}m

      [Regexp.last_match(1), Regexp.last_match(2)]
    end

    def to_s
      @ref
    end
  end

  class Node
    class Environment
      attr_reader :name
      def initialize(name)
        @name = name.to_sym
      end

      def to_s
        @name.to_s
      end
    end
  end

  module Util
    # Ruby's seeded generator, as Puppet's `fqdn_rand` and stdlib's `seeded_rand` use it.
    def self.deterministic_rand_int(seed, max)
      Random.new(seed).rand(max)
    end

    def self.deterministic_rand(seed, max)
      deterministic_rand_int(seed, max).to_s
    end

    module Package
      # Puppet's version comparison: digit runs numerically, other runs as text, `-` and
      # `.` separating.
      def self.versioncmp(a, b, _ignore_trailing_zeroes = false)
        pa = a.to_s.scan(/\d+|[A-Za-z]+|[.-]/)
        pb = b.to_s.scan(/\d+|[A-Za-z]+|[.-]/)
        while !pa.empty? && !pb.empty?
          x = pa.shift
          y = pb.shift
          next if x == y
          return -1 if x == '-'
          return 1 if y == '-'
          return -1 if x == '.'
          return 1 if y == '.'
          if x =~ /\A\d+\z/ && y =~ /\A\d+\z/
            return x.to_i <=> y.to_i if x.to_i != y.to_i
            return x <=> y
          end
          return x.upcase <=> y.upcase if x.upcase != y.upcase

          return x <=> y
        end
        a.to_s <=> b.to_s
      end
    end

    module Json
      def self.load(text, *_opts)
        JSON.parse(text)
      end

      def self.dump(obj, opts = {})
        opts[:pretty] ? JSON.pretty_generate(obj) : JSON.generate(obj)
      end
    end
  end

  module Pops
    module Types
      # A Puppet type, as Ordo printed it; Ordo parses the text back.
      class OrdoType
        def initialize(text)
          @text = text
        end

        # A type of the class Puppet's would have (`PIntegerType` for `Integer[1]`).
        def self.of(text)
          base = text[/\A[A-Z][\w:]*/].to_s
          name = base.include?(':') || base.empty? ? 'PTypeAliasType' : "P#{base}Type"
          klass = if Types.const_defined?(name, false)
                    Types.const_get(name, false)
                  else
                    Types.const_set(name, Class.new(OrdoType))
                  end
          klass = OrdoType unless klass <= OrdoType
          klass.new(text)
        end

        def to_s
          @text
        end

        def ==(other)
          other.is_a?(OrdoType) && other.to_s == @text
        end
        alias eql? ==

        def hash
          @text.hash
        end

        def instance?(value)
          OrdoHost.callback('instance_of', 'type' => @text, 'value' => OrdoHost.encode(value))
        end
      end
      PAnyType = OrdoType

      class PSensitiveType
        class Sensitive
          def initialize(value)
            @value = value
          end

          def unwrap
            @value
          end

          def to_s
            'Sensitive [value redacted]'
          end

          def inspect
            '#<Sensitive [value redacted]>'
          end
        end
      end

      module TypeCalculator
        def self.infer_set(value)
          OrdoType.of(OrdoHost.callback('type_of', 'value' => OrdoHost.encode(value), 'detailed' => true))
        end

        def self.infer(value)
          OrdoType.of(OrdoHost.callback('type_of', 'value' => OrdoHost.encode(value), 'detailed' => false))
        end

        def self.instance?(type, value)
          type = OrdoType.new(type.to_s) unless type.is_a?(OrdoType)
          type.instance?(value)
        end
      end

      class TypeParser
        def self.singleton
          new
        end

        def parse(text, *_rest)
          OrdoType.of(text.to_s)
        end
      end

      module Iterable
        def self.asserted_iterable(_caller, obj, *_rest)
          case obj
          when Hash, Array then obj.each
          when Integer then obj.times
          when String then obj.each_char
          else
            raise ArgumentError, "#{obj.inspect} is not iterable" unless obj.respond_to?(:each)

            obj.each
          end
        end

        def self.on(obj, *_rest)
          asserted_iterable(nil, obj)
        rescue ArgumentError
          nil
        end
      end
    end

    module Serialization
      # Values are plain data already on this side of Ordo.
      module ToDataConverter
        def self.convert(value, _options = {})
          value
        end
      end

      module FromDataConverter
        def self.convert(value, _options = {})
          value
        end
      end
    end

    module Time
      class Timestamp
        def initialize(text)
          @text = text
        end

        def to_s
          @text
        end
      end

      class Timespan
        def initialize(text)
          @text = text
        end

        def to_s
          @text
        end
      end
    end
  end

  # Puppet::Functions.create_function and what a function class declares.
  module Functions
    # One `dispatch` block.
    class Dispatch
      attr_reader :method_name, :params, :block, :return_type, :handler

      def initialize(method_name, handler = false)
        @method_name = method_name
        @params = []
        @block = nil
        @return_type = nil
        @handler = handler
        @scope_param = false
        @aliases = []
      end

      def with_aliases(aliases)
        @aliases = aliases
        self
      end

      def expand(type)
        text = type.to_s
        @aliases.each do |name, definition|
          text = text.gsub(/\b#{Regexp.escape(name)}\b/, definition)
        end
        text
      end

      def param(type, name)
        @params << { 'type' => expand(type), 'name' => name.to_s, 'kind' => 'required' }
      end
      alias required_param param

      def optional_param(type, name)
        @params << { 'type' => expand(type), 'name' => name.to_s, 'kind' => 'optional' }
      end

      def repeated_param(type, name)
        @params << { 'type' => expand(type), 'name' => name.to_s, 'kind' => 'repeated' }
      end
      alias optional_repeated_param repeated_param

      def required_repeated_param(type, name)
        @params << { 'type' => expand(type), 'name' => name.to_s, 'kind' => 'required_repeated' }
      end

      def block_param(*args)
        type, name = block_args(args)
        @block = { 'type' => type, 'name' => name, 'optional' => false }
      end
      alias required_block_param block_param

      def optional_block_param(*args)
        type, name = block_args(args)
        @block = { 'type' => type, 'name' => name, 'optional' => true }
      end

      def block_args(args)
        case args.size
        when 0 then ['Callable', 'block']
        when 1 then args[0].is_a?(Symbol) ? ['Callable', args[0].to_s] : [expand(args[0]), 'block']
        else [expand(args[0]), args[1].to_s]
        end
      end

      def return_type(type)
        @return_type = expand(type)
      end

      def scope_param
        @scope_param = true
      end

      def scope_param?
        @scope_param
      end

      def to_h
        { 'method' => @method_name.to_s, 'params' => @params, 'block' => @block,
          'return_type' => @return_type, 'handler' => @handler }
      end
    end

    # `local_types { type 'Name = Definition' }`.
    class LocalTypes
      attr_reader :aliases

      def initialize
        @aliases = []
      end

      def type(text)
        name, definition = text.split('=', 2).map(&:strip)
        @aliases << [name, definition]
      end
    end

    class Function
      attr_accessor :ordo_scope

      def initialize(closure_scope = nil, loader = nil)
        @closure_scope = closure_scope
        @loader = loader
      end

      def closure_scope
        @closure_scope
      end

      def loader
        @loader
      end

      def call_function(name, *args, &block)
        raise ArgumentError, 'a block given to call_function from Ruby is not supported by Ordo' if block

        OrdoHost.callback('call_function', 'name' => name.to_s, 'args' => OrdoHost.encode(args))
      end

      def call_function_with_scope(_scope, name, *args, &block)
        call_function(name, *args, &block)
      end

      def self.ordo_name
        @ordo_name
      end

      def self.ordo_name=(name)
        @ordo_name = name
      end

      def self.ordo_aliases
        @ordo_aliases ||= []
      end

      def self.ordo_declared
        @ordo_declared ||= []
      end

      def self.dispatch(method_name, &block)
        d = Dispatch.new(method_name).with_aliases(ordo_aliases)
        d.instance_eval(&block) if block
        ordo_declared << d
      end

      def self.argument_mismatch(method_name, &block)
        d = Dispatch.new(method_name, true).with_aliases(ordo_aliases)
        d.instance_eval(&block) if block
        ordo_declared << d
      end

      def self.local_types(&block)
        lt = LocalTypes.new
        lt.instance_eval(&block)
        ordo_aliases.concat(lt.aliases)
      end

      # The dispatches, or Puppet's default one from the method named as the function.
      def self.ordo_dispatches
        return ordo_declared unless ordo_declared.empty?

        simple = ordo_name.split('::').last
        raise ArgumentError, "Function #{ordo_name}(): no dispatch and no method named #{simple}" unless method_defined?(simple)

        d = Dispatch.new(simple)
        instance_method(simple).parameters.each do |kind, pname|
          case kind
          when :req then d.param('Any', pname)
          when :opt then d.optional_param('Any', pname)
          when :rest then d.repeated_param('Any', pname)
          when :block then d.optional_block_param('Callable', pname)
          end
        end
        ordo_declared << d
        ordo_declared
      end
    end

    class InternalFunction < Function
    end

    def self.create_function(func_name, function_base = Function, &block)
      name = func_name.to_s.sub(/\A::/, '')
      klass = Class.new(function_base)
      klass.ordo_name = name
      klass.class_eval(&block) if block
      OrdoHost.functions4[name] = klass
      klass
    end
  end

  module Parser
    module Functions
      def self.newfunction(name, options = {}, &block)
        type = (options[:type] || :statement).to_sym
        arity = options[:arity] || -1
        OrdoHost.functions3[name.to_s] = { type: type, arity: arity, block: block }
        nil
      end

      def self.function(name)
        OrdoHost.callback('function_exists', 'name' => name.to_s) ? "function_#{name}" : false
      end

      def self.autoloader
        Autoloader
      end

      module Autoloader
        def self.load(*_args)
          true
        end

        def self.loaded?(*_args)
          true
        end
      end
    end

    Scope = OrdoHost::ScopeProxy
  end
end

# Gettext's `_()`, as Puppet defines it.
module Kernel
  private

  def _(text)
    text
  end

  def n_(singular, plural, count)
    count == 1 ? singular : plural
  end
end

module Facter
  def self.value(name)
    OrdoHost.callback('fact', 'name' => name.to_s)
  end

  def self.[](name)
    Struct.new(:value).new(value(name))
  end
end

OrdoHost.main if $PROGRAM_NAME == __FILE__ || ENV['ORDO_RUBY_HOST'] == '1'
